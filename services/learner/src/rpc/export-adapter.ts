// ExportAdapter: a manifest (name, version, base model, each file's size and SHA-256), then
// the PEFT files in chunks, in the manifest's order.
import { createHash } from "node:crypto";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { ExportAdapterResponseSchema, type ExportAdapterRequest, type ExportAdapterResponse } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE } from "@lean-grpo/lm";
import { adapterName } from "../training/learner.js";
import { toConnectError } from "./connect-errors.js";
import type { LearnerHost } from "./learner-host.js";

const DEFAULT_CHUNK = 1 << 20;
const FILE_ORDER = [ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE] as const;

export async function* exportAdapter(host: LearnerHost, request: ExportAdapterRequest, ctx: HandlerContext): AsyncGenerator<ExportAdapterResponse> {
  const chunkSize = request.chunkSize === 0 ? DEFAULT_CHUNK : request.chunkSize;
  // A chunk must fit in one response message, with room for its envelope.
  const largest = host.config.server.limits.write_max_bytes - 1024;
  if (chunkSize > largest) {
    throw new ConnectError(`chunk_size ${chunkSize} exceeds the largest response (server.limits.write_max_bytes allows ${largest}); send 0 for the default ${DEFAULT_CHUNK}`, Code.InvalidArgument);
  }
  let exported;
  try {
    const learner = await host.learner();
    exported = learner.exportAdapter(Number(request.version));
  } catch (error) {
    throw toConnectError(error, ctx.signal);
  }
  const { version, files } = exported;
  yield create(ExportAdapterResponseSchema, {
    part: {
      case: "manifest",
      value: {
        name: adapterName(version),
        version: BigInt(version),
        baseModel: host.baseModel,
        files: FILE_ORDER.map((path) => ({ path, size: BigInt(files[path].byteLength), sha256: createHash("sha256").update(files[path]).digest("hex") })),
      },
    },
  });
  for (const path of FILE_ORDER) {
    const bytes = files[path];
    for (let offset = 0; offset < bytes.byteLength || offset === 0; offset += chunkSize) {
      ctx.signal.throwIfAborted();
      const end = Math.min(bytes.byteLength, offset + chunkSize);
      yield create(ExportAdapterResponseSchema, {
        part: { case: "chunk", value: { path, offset: BigInt(offset), data: bytes.subarray(offset, end), eof: end === bytes.byteLength } },
      });
      if (end === bytes.byteLength) break;
    }
  }
}
