// LoadAdapter by path checks the directory under adapters.dir, then the backend loads it. The
// embedded backend reads exactly what was checked: through the walk from adapters.dir, each
// name opened from the directory before it. A component swapped for a symlink between the
// check and the load (here, at the moment the backend is handed the adapter) is refused, not
// followed: the planted adapter elsewhere is never loaded, and nothing samples under its name.
import { cpSync, mkdirSync, mkdtempSync, renameSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { InferenceService, type LoadAdapterRequestSchema } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { loadConfig, serve, type RunningServer } from "@lean-grpo/kit";
import { InferenceConfigSchema } from "../src/config.js";
import { createInferenceImpl } from "../src/service.js";
import { createEmbeddedBackend } from "../src/backend/embedded/embedded-backend.js";
import type { InferenceBackend } from "../src/backend/inference-backend.js";

const fixtures = fileURLToPath(new URL("../../../packages/lm/test/fixtures/", import.meta.url));
const modelDir = `${fixtures}qwen2-tiny`;

let server: RunningServer;
let client: ReturnType<typeof createClient<typeof InferenceService>>;
let adaptersDir: string;
const loadsSeen: string[] = [];

beforeAll(async () => {
  const work = mkdtempSync(join(tmpdir(), "adapter-race-"));
  adaptersDir = join(work, "adapters");
  const outside = join(work, "outside");
  // The checked adapter, and another valid one outside adapters.dir laid out the same way.
  for (const base of [adaptersDir, outside]) {
    mkdirSync(join(base, "runs"), { recursive: true });
    cpSync(`${fixtures}qwen2-tiny-lora`, join(base, "runs", "policy"), { recursive: true });
  }
  const config = loadConfig(InferenceConfigSchema, {
    overrides: [
      `embedded.model_dir=${modelDir}`,
      "embedded.tensor_backend=cpu",
      `adapters.dir=${adaptersDir}`,
      "server.port=0",
      "server.shutdown.drain_delay_ms=0",
    ],
  });
  const embedded = createEmbeddedBackend({ modelDir, tensorBackend: "cpu", maxBatchRows: 0 });
  // The race, made certain: once the service has checked the adapter, `runs` becomes a symlink out.
  const racing: InferenceBackend = {
    ...embedded,
    name: embedded.name,
    async loadAdapter(name, source, signal) {
      loadsSeen.push(source.dir);
      renameSync(join(adaptersDir, "runs"), join(adaptersDir, "runs-moved"));
      symlinkSync(join(outside, "runs"), join(adaptersDir, "runs"));
      return embedded.loadAdapter(name, source, signal);
    },
  };
  server = await serve({
    name: "inference",
    services: [{ service: InferenceService, impl: createInferenceImpl(racing, config) }],
    config: config.server,
  });
  client = createClient(InferenceService, createGrpcTransport({ baseUrl: server.url }));
});

afterAll(async () => {
  await server?.shutdown();
});

async function* once(
  message: MessageInitShape<typeof LoadAdapterRequestSchema>,
): AsyncIterable<MessageInitShape<typeof LoadAdapterRequestSchema>> {
  yield message;
}

describe("an adapter directory swapped after its check", () => {
  it("is not followed: the load is refused and the adapter is not served", async () => {
    const error = await client
      .loadAdapter(once({ part: { case: "source", value: { name: "policy-v1", version: 1n, path: "runs/policy", files: [] } } }))
      .then(
        () => undefined,
        (e) => ConnectError.from(e),
      );
    // The backend was handed the checked adapter, and read it only through the walk, which met the symlink.
    expect(loadsSeen).toEqual([join(adaptersDir, "runs", "policy")]);
    expect(error).toBeDefined();
    expect(error!.rawMessage).toMatch(/symlink/i);
    const generated = await client
      .generate({ prompt: { kind: { case: "tokenIds", value: { ids: [3, 17] } } }, adapter: "policy-v1", sampling: { maxTokens: 2 } })
      .then(
        () => undefined,
        (e) => ConnectError.from(e),
      );
    expect(generated?.code).toBe(Code.NotFound);
  });
});
