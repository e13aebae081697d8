// `lean-grpo serve all` starts the five services on real loopback ports; each
// answers health over gRPC, and SIGTERM drains them and exits 0.
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { repoRoot } from "../../../../tests/support/interop-verifier.js";

const SERVICES = {
  inference: "leangrpo.v1.InferenceService",
  verifier: "leangrpo.v1.LeanVerifierService",
  reward: "leangrpo.v1.RewardService",
  learner: "leangrpo.v1.LearnerService",
  orchestrator: "leangrpo.v1.OrchestratorService",
};

describe("lean-grpo serve all", () => {
  it("serves every service on its own port and drains on SIGTERM", async () => {
    const overrides = Object.keys(SERVICES).flatMap((name) => [`${name}.server.port=0`, `${name}.server.shutdown.drain_delay_ms=0`]);
    const child = spawn(process.execPath, [`${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`, "serve", "all", ...overrides], {
      cwd: repoRoot,
      env: { ...process.env, LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const urls: Record<string, string> = {};
    for await (const line of createInterface({ input: child.stdout! })) {
      const [name, url, status] = line.split(/\s+/);
      if (name && name in SERVICES) {
        expect(status).toBe("SERVING");
        urls[name] = url!;
      }
      if (Object.keys(urls).length === 5) break;
    }
    expect(new Set(Object.values(urls)).size).toBe(5);
    for (const [name, service] of Object.entries(SERVICES)) {
      const health = createClient(Health, createGrpcTransport({ baseUrl: urls[name]! }));
      expect((await health.check({ service })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    }
    // serve all points the reward service at the verifier it started: a Lean proof is
    // sent on to it (which, with no REPL configured here, says so).
    const reward = createClient(RewardService, createGrpcTransport({ baseUrl: urls.reward! }));
    const error = await reward
      .score({
        theorem: { name: "t", statement: "theorem t : True" },
        completion: { text: "```lean\ntheorem t : True := by trivial\n```" },
      })
      .then(
        () => undefined,
        (e) => ConnectError.from(e),
      );
    expect(error?.code).toBe(Code.Unavailable);
    expect(error?.rawMessage).toContain("repl.command");
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
  });

  it("names an unknown service and the accepted ones, exiting 2", async () => {
    const child = spawn(process.execPath, [`${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`, "serve", "verifer"], {
      cwd: repoRoot,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const [code] = await once(child, "exit");
    expect(code).toBe(2);
    expect(stderr).toContain('unknown service "verifer"; accepted: inference, verifier, reward, learner, orchestrator, all');
  });
});
