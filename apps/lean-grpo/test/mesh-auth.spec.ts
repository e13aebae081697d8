// Auth inside the mesh: with a token set on the reward service, the learner and the verifier,
// the mesh `train` starts requires it of every service, the orchestrator included, and a run
// started through the orchestrator trains (its clients present the token); a caller without
// it is refused UNAUTHENTICATED; health answers without one. And the rule `lean-grpo serve`
// applies: auth on whenever a service binds beyond loopback or a token is given, one token.
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { OrchestratorService, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { AUTH_TOKEN_ENV, callerAuth, createServiceClient, loadConfig } from "@lean-grpo/kit";
import { OrchestratorConfigSchema } from "@lean-grpo/orchestrator";
import { RewardConfigSchema } from "@lean-grpo/reward";
import { startMesh, type RunningMesh } from "../src/mesh/start-mesh.js";
import { applyMeshAuth, findMeshToken } from "../src/mesh/mesh-auth.js";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";

const TOKEN = "mesh-t0ken-4f1c";
const guarded = { server: { auth: { token: TOKEN } } };

async function codeOf(call: Promise<unknown>): Promise<Code | "ok"> {
  return call.then(
    () => "ok" as const,
    (e: unknown) => ConnectError.from(e).code,
  );
}

describe("a run through a mesh whose reward service, learner and verifier require a token", () => {
  let fixture: MeshFixture;
  let mesh: RunningMesh;
  beforeAll(async () => {
    fixture = await meshFixture();
    mesh = await startMesh({
      modelDir: fixture.modelDir,
      services: {
        inference: { embedded: { tensor_backend: "cpu" }, adapters: { dir: path.join(fixture.dir, "adapters") } },
        learner: { backend: "cpu", lora: { rank: 2, alpha: 4 }, optimizer: { learning_rate: 1e-2 }, ...guarded },
        reward: { ...guarded, verifier: { token: TOKEN } },
        verifier: guarded,
      },
      orchestrator: { runs_dir: fixture.runsDir, data_root: fixture.dir, services: { token: TOKEN } },
    });
  }, 120_000);
  afterAll(async () => {
    await mesh?.shutdown();
    await fixture?.cleanup();
  });

  it("trains: every call the orchestrator makes presents the token", async () => {
    expect(mesh.token).toBe(TOKEN);
    const anonymous = createClient(OrchestratorService, createGrpcTransport({ baseUrl: mesh.urls.orchestrator! }));
    expect(await codeOf(anonymous.listRuns({}))).toBe(Code.Unauthenticated);
    const { client, transport } = createServiceClient(OrchestratorService, {
      endpoints: [mesh.urls.orchestrator!],
      interceptors: callerAuth(mesh.token),
    });
    try {
      await client.startRun({ datasetPath: fixture.dataset, runId: "with-auth", config: { training: tinyTraining(2) } });
      let final = RunState.UNSPECIFIED;
      let error = "";
      for await (const event of client.watchRun({ runId: "with-auth", fromStart: true })) {
        if (event.event.case === "stateChange") [final, error] = [event.event.value.state, event.event.value.error];
      }
      expect(error).toBe("");
      expect(final).toBe(RunState.COMPLETED);
      expect(existsSync(path.join(fixture.runsDir, "with-auth", "checkpoints", "step-2", "trainer_state.json"))).toBe(true);
    } finally {
      transport.close();
    }
  }, 120_000);

  it("refuses a caller without the token UNAUTHENTICATED, and answers health without one", async () => {
    const learner = createClient(LearnerService, createGrpcTransport({ baseUrl: mesh.urls.learner! }));
    const reward = createClient(RewardService, createGrpcTransport({ baseUrl: mesh.urls.reward! }));
    expect(await codeOf(learner.getStatus({}))).toBe(Code.Unauthenticated);
    expect(await codeOf(learner.saveCheckpoint({ path: "planted" }))).toBe(Code.Unauthenticated);
    expect(await codeOf(learner.getStatus({}, { headers: { authorization: "Bearer wrong" } }))).toBe(Code.Unauthenticated);
    expect(await codeOf(reward.listScorers({}))).toBe(Code.Unauthenticated);
    expect(await codeOf(learner.getStatus({}, { headers: { authorization: `Bearer ${TOKEN}` } }))).toBe("ok");
    for (const url of [mesh.urls.learner!, mesh.urls.reward!, mesh.urls.verifier!]) {
      const health = createClient(Health, createGrpcTransport({ baseUrl: url }));
      expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    }
  });
});

describe("lean-grpo serve's auth rule", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "mesh-auth-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const configs = (host: string) => ({
    orchestrator: loadConfig(OrchestratorConfigSchema, { flags: { server: { host } } }),
    reward: loadConfig(RewardConfigSchema, { flags: {} }),
    model: { dir: "models/arith-tiny" },
  });

  it("stays off while every service is on loopback and no token is given", () => {
    const all = configs("127.0.0.1");
    expect(applyMeshAuth(all, { env: {}, tokenFile: path.join(dir, "never") })).toEqual({ source: "none" });
    expect(all.orchestrator.server.auth.token).toBeUndefined();
    expect(existsSync(path.join(dir, "never"))).toBe(false);
  });

  it("beyond loopback, generates a token into a 0600 file, reuses it, and gives it to every server and client", async () => {
    const file = path.join(dir, "token");
    const first = configs("0.0.0.0");
    const auth = applyMeshAuth(first, { env: {}, tokenFile: file });
    expect(auth).toMatchObject({ source: "file", file });
    expect(auth.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(readFileSync(file, "utf8").trim()).toBe(auth.token);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(first.orchestrator.server.auth.token).toBe(auth.token);
    expect(first.reward.server.auth.token).toBe(auth.token);
    expect(first.orchestrator.services.token).toBe(auth.token);
    expect(first.reward.verifier.token).toBe(auth.token);
    expect(applyMeshAuth(configs("::"), { env: {}, tokenFile: file }).token).toBe(auth.token);
  });

  it("takes LEANGRPO_AUTH_TOKEN or the one configured token, and refuses two different ones", () => {
    const fromEnv = configs("127.0.0.1");
    expect(applyMeshAuth(fromEnv, { env: { [AUTH_TOKEN_ENV]: "e" } })).toEqual({ token: "e", source: "env" });
    expect(fromEnv.reward.server.auth.token).toBe("e");
    const set = configs("0.0.0.0");
    set.reward.server.auth.token = "r";
    expect(applyMeshAuth(set, { env: {} })).toEqual({ token: "r", source: "config" });
    expect(set.orchestrator.services.token).toBe("r");
    const two = configs("127.0.0.1");
    two.reward.server.auth.token = "a";
    two.orchestrator.server.auth.token = "b";
    expect(() => applyMeshAuth(two, { env: {} })).toThrow(
      /^reward\.server\.auth\.token and orchestrator\.server\.auth\.token give different tokens; the mesh has one token/,
    );
  });

  it("refuses a configured token, a server's or a client's, that differs from LEANGRPO_AUTH_TOKEN, naming both", () => {
    const server = configs("127.0.0.1");
    server.reward.server.auth.token = "r";
    expect(() => applyMeshAuth(server, { env: { [AUTH_TOKEN_ENV]: "e" } })).toThrow(
      /^reward\.server\.auth\.token and LEANGRPO_AUTH_TOKEN give different tokens/,
    );
    const client = configs("127.0.0.1");
    client.orchestrator.services.token = "o";
    expect(() => applyMeshAuth(client, { env: { [AUTH_TOKEN_ENV]: "e" } })).toThrow(
      /^orchestrator\.services\.token and LEANGRPO_AUTH_TOKEN give different tokens/,
    );
    const verifierClient = configs("0.0.0.0");
    verifierClient.reward.verifier.token = "v";
    expect(() => applyMeshAuth(verifierClient, { env: { [AUTH_TOKEN_ENV]: "e" } })).toThrow(
      /^reward\.verifier\.token and LEANGRPO_AUTH_TOKEN/,
    );
    const same = configs("0.0.0.0");
    same.reward.server.auth.token = "e";
    expect(applyMeshAuth(same, { env: { [AUTH_TOKEN_ENV]: "e" } })).toEqual({ token: "e", source: "env" });
    expect(same.orchestrator.server.auth.token).toBe("e");
  });

  it("gives a client of a mesh started elsewhere (the dashboard) LEANGRPO_AUTH_TOKEN, else the token file serve wrote", async () => {
    const file = path.join(dir, "served-token");
    expect(findMeshToken({ env: {}, tokenFile: file })).toEqual({ source: "none" });
    await writeFile(file, "from-file\n");
    expect(findMeshToken({ env: {}, tokenFile: file })).toEqual({ token: "from-file", source: "file", file });
    expect(findMeshToken({ env: { [AUTH_TOKEN_ENV]: "from-env" }, tokenFile: file })).toEqual({ token: "from-env", source: "env" });
    await writeFile(file, "\n");
    expect(findMeshToken({ env: {}, tokenFile: file })).toEqual({ source: "none" });
  });
});
