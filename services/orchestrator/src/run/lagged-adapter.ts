// Resuming an async run: the step after the checkpoint was sampled, in the run that
// never stopped, with the adapter of the step before the checkpoint (one step off-policy).
// The learner's checkpoint holds only its latest version, so that adapter is loaded into
// the inference service from the run's own copy (runs/<id>/adapters/<name>/, written by
// every adapter sync) and the resumed run samples that step exactly as before.
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { LoadAdapterRequestSchema } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import type { MeshClients } from "./mesh-clients.js";
import type { RunOutputs } from "./run-outputs.js";
import type { AdapterRef } from "./step-rollouts.js";

const CHUNK = 1 << 20;

/** The adapter in effect after `step` (0: before training, the base model), loaded for sampling. */
export async function adapterAfterStep(clients: MeshClients, outputs: RunOutputs, step: number, signal?: AbortSignal): Promise<AdapterRef> {
  if (step === 0) return { name: "", version: 0 };
  const record = (await outputs.readSteps()).find((r) => r.step === step);
  if (!record) throw new Error(`resuming an async run needs step ${step}'s line in ${path.join(outputs.dir, "metrics.jsonl")} (the adapter step ${step + 2} sampled with)`);
  if (record.adapter_version === 0) return { name: "", version: 0 };
  return clients.withRetry("inference", () => loadSavedAdapter(clients, outputs.adaptersDir, record.adapter_version, signal), signal);
}

async function loadSavedAdapter(clients: MeshClients, adaptersDir: string, version: number, signal?: AbortSignal): Promise<AdapterRef> {
  const entries = await readdir(adaptersDir, { withFileTypes: true }).catch(() => []);
  // The learner names versions policy-v<N>; syncAdapter keeps that name for the directory.
  const name = entries.find((e) => e.isDirectory() && (e.name === `policy-v${version}` || e.name.endsWith(`-v${version}`)))?.name;
  if (!name) throw new Error(`adapter version ${version} is not in ${adaptersDir}; an async run resumes from the adapters it synced (or resume with training.async=false)`);
  const { adapters } = await clients.inference.listModels({}, { signal });
  if (adapters.some((a) => a.name === name)) return { name, version };

  const dir = path.join(adaptersDir, name);
  const files = await Promise.all(
    (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile()).map(async (e) => ({ path: e.name, data: await readFile(path.join(dir, e.name)) })),
  );
  files.sort((a, b) => a.path.localeCompare(b.path));
  async function* requests(): AsyncGenerator<MessageInitShape<typeof LoadAdapterRequestSchema>> {
    yield {
      part: {
        case: "source",
        value: { name, version: BigInt(version), path: "", files: files.map((f) => ({ path: f.path, size: BigInt(f.data.length), sha256: createHash("sha256").update(f.data).digest("hex") })) },
      },
    };
    for (const file of files) {
      for (let offset = 0; offset === 0 || offset < file.data.length; offset += CHUNK) {
        const data = file.data.subarray(offset, offset + CHUNK);
        yield { part: { case: "chunk", value: { path: file.path, offset: BigInt(offset), data, eof: offset + CHUNK >= file.data.length } } };
      }
    }
  }
  const loaded = await clients.inference.loadAdapter(requests(), { signal });
  if (loaded.unloaded.includes(name)) {
    throw new Error(`the inference service unloaded ${name} as soon as it loaded it: an async run samples with the previous adapter while the next one loads, so the inference service must keep at least 2 adapters (adapters.keep)`);
  }
  return { name, version };
}
