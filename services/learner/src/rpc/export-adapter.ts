// ExportAdapter: a manifest (name, version, base model, each file's size and SHA-256), then
// the PEFT files in chunks, config first.
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { ExportAdapterRequest, ExportAdapterResponse } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import {
  adapterMessages,
  AdapterVersionError,
  DEFAULT_CHUNK_SIZE,
  exportAdapterEnvelope,
  versionFromProto,
} from "@lean-grpo/adapter-files";
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, REASONING_MAP_FILE } from "@lean-grpo/lm";
import { toConnectError } from "./connect-errors.js";
import type { LearnerHost } from "./learner-host.js";

export async function* exportAdapter(
  host: LearnerHost,
  request: ExportAdapterRequest,
  ctx: HandlerContext,
): AsyncGenerator<ExportAdapterResponse> {
  const chunkSize = request.chunkSize === 0 ? DEFAULT_CHUNK_SIZE : request.chunkSize;
  // A chunk must fit in one response message, with room for its envelope.
  const largest = host.config.server.limits.write_max_bytes - 1024;
  if (chunkSize > largest) {
    throw new ConnectError(
      `chunk_size ${chunkSize} exceeds the largest response (server.limits.write_max_bytes allows ${largest}); send 0 for the default ${DEFAULT_CHUNK_SIZE}`,
      Code.InvalidArgument,
    );
  }
  let exported;
  let mapFile: Uint8Array | null = null;
  try {
    const learner = await host.learner();
    exported = learner.exportAdapter(versionFromProto(request.version));
    mapFile = learner.reasoningMapFile;
  } catch (error) {
    if (error instanceof AdapterVersionError) throw new ConnectError(`version: ${error.message}`, Code.InvalidArgument);
    throw toConnectError(error, ctx.signal);
  }
  const { version, files } = exported;
  const peftFiles: Array<{ path: string; data: Uint8Array }> = ([ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE] as const).map((path) => ({
    path,
    data: files[path],
  }));
  // With a reasoning vocabulary the map travels with the rows (a loader checks it against its own).
  if (mapFile) peftFiles.push({ path: REASONING_MAP_FILE, data: mapFile });
  for (const message of adapterMessages(exportAdapterEnvelope, { version, baseModel: host.baseModel }, peftFiles, chunkSize)) {
    ctx.signal.throwIfAborted();
    yield message;
  }
}
