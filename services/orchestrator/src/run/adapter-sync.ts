// Moves an adapter version from the learner to the inference service: ExportAdapter's
// stream is written to runs/<id>/adapters/<name>/ and forwarded, chunk by chunk, into
// LoadAdapter, so the next step samples from the new policy.
import { mkdir, open, type FileHandle } from "node:fs/promises";
import path from "node:path";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { LoadAdapterRequestSchema } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import type { MeshClients } from "./mesh-clients.js";

export interface SyncedAdapter {
  name: string;
  version: bigint;
  dir: string;
}

export async function syncAdapter(clients: MeshClients, version: bigint, adaptersDir: string, signal?: AbortSignal): Promise<SyncedAdapter> {
  let manifest: { name: string; version: bigint } | undefined;
  let dir = "";
  const exported = clients.learner.exportAdapter({ version }, { signal });

  async function* forward(): AsyncGenerator<MessageInitShape<typeof LoadAdapterRequestSchema>> {
    let file: FileHandle | undefined;
    try {
      for await (const message of exported) {
        const part = message.part;
        if (part.case === "manifest") {
          manifest = { name: part.value.name, version: part.value.version };
          dir = path.join(adaptersDir, part.value.name);
          await mkdir(dir, { recursive: true });
          yield { part: { case: "source", value: { name: part.value.name, version: part.value.version, path: "", files: part.value.files } } };
        } else if (part.case === "chunk") {
          file ??= await open(path.join(dir, safeRelative(part.value.path)), "w");
          await file.write(part.value.data, 0, part.value.data.length, Number(part.value.offset));
          if (part.value.eof) {
            await file.close();
            file = undefined;
          }
          yield { part: { case: "chunk", value: part.value } } satisfies MessageInitShape<typeof LoadAdapterRequestSchema>;
        }
      }
    } finally {
      await file?.close();
    }
  }

  await clients.inference.loadAdapter(forward(), { signal });
  if (!manifest) throw new Error("ExportAdapter sent no manifest");
  return { name: manifest.name, version: manifest.version, dir };
}

/** The learner names files relative to the adapter directory; refuse anything that would escape it. */
function safeRelative(file: string): string {
  if (path.isAbsolute(file) || file.split(/[\\/]/).includes("..")) throw new Error(`adapter file path "${file}" escapes its directory`);
  return file;
}

