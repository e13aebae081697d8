// The mesh `train` and `eval` start follows the one rule for LEANGRPO_AUTH_TOKEN: every
// service it starts requires the variable's token (health excepted), its own clients present
// it, `eval` gets its answer through it, and a section that sets another token is refused
// before any service starts.
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { OrchestratorService } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { LeanVerifierService } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { AUTH_TOKEN_ENV } from "@lean-grpo/kit";
import { evaluateThroughOrchestrator } from "../src/eval/evaluate-through-orchestrator.js";
import { startMesh, type RunningMesh } from "../src/mesh/start-mesh.js";
import { meshFixture, type MeshFixture } from "./support/mesh-fixture.js";

const TOKEN = "env-t0ken-of-the-mesh";

async function codeOf(call: Promise<unknown>): Promise<Code | "ok"> {
  return call.then(
    () => "ok" as const,
    (e: unknown) => ConnectError.from(e).code,
  );
}

describe("the mesh train and eval start, with LEANGRPO_AUTH_TOKEN set", () => {
  let fixture: MeshFixture;
  let mesh: RunningMesh;
  const services = (dir: string) => ({
    inference: { embedded: { tensor_backend: "cpu" }, adapters: { dir: path.join(dir, "adapters") } },
    learner: { backend: "cpu" },
  });
  beforeAll(async () => {
    fixture = await meshFixture();
    mesh = await startMesh({
      modelDir: fixture.modelDir,
      services: services(fixture.dir),
      orchestrator: { runs_dir: fixture.runsDir, data_root: fixture.dir },
      auth: { env: { [AUTH_TOKEN_ENV]: TOKEN } },
    });
  }, 120_000);
  afterAll(async () => {
    await mesh?.shutdown();
    await fixture?.cleanup();
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("requires it of every caller of every service it starts, and answers health without it", async () => {
    expect(mesh.token).toBe(TOKEN);
    const calls: [string, (c: Client<DescService>, o?: object) => Promise<unknown>, DescService][] = [
      ["orchestrator", (c, o) => (c as Client<typeof OrchestratorService>).listRuns({}, o), OrchestratorService],
      ["learner", (c, o) => (c as Client<typeof LearnerService>).getStatus({}, o), LearnerService],
      ["inference", (c, o) => (c as Client<typeof InferenceService>).listModels({}, o), InferenceService],
      ["reward", (c, o) => (c as Client<typeof RewardService>).listScorers({}, o), RewardService],
      ["verifier", (c, o) => (c as Client<typeof LeanVerifierService>).poolStats({}, o), LeanVerifierService],
    ];
    for (const [name, call, service] of calls) {
      const client = createClient(service, createGrpcTransport({ baseUrl: mesh.urls[name]! })) as Client<DescService>;
      expect(await codeOf(call(client)), name).toBe(Code.Unauthenticated);
      expect(await codeOf(call(client, { headers: { authorization: `Bearer ${TOKEN}` } })), name).toBe("ok");
      const health = createClient(Health, createGrpcTransport({ baseUrl: mesh.urls[name]! }));
      expect((await health.check({ service: "" })).status, name).toBe(HealthCheckResponse_ServingStatus.SERVING);
    }
  });

  it("eval evaluates through the mesh it starts, presenting the variable's token", async () => {
    vi.stubEnv(AUTH_TOKEN_ENV, TOKEN);
    const report = await evaluateThroughOrchestrator({
      data: path.join(fixture.dir, fixture.dataset),
      runsDir: fixture.runsDir,
      dataRoot: fixture.dir,
      modelDir: fixture.modelDir,
      maxTokens: 4,
      ks: [1],
      services: services(fixture.dir),
    });
    expect(report.problems).toBe(6);
    expect(report.greedy).toBe(true);
  }, 60_000);

  it("refuses a section that sets another token, naming both, before starting any service", async () => {
    await expect(
      startMesh({
        modelDir: fixture.modelDir,
        services: { ...services(fixture.dir), reward: { server: { auth: { token: "another" } } } },
        orchestrator: { runs_dir: fixture.runsDir },
        auth: { env: { [AUTH_TOKEN_ENV]: TOKEN } },
      }),
    ).rejects.toThrow(/^reward\.server\.auth\.token and LEANGRPO_AUTH_TOKEN give different tokens/);
  });
});
