// LEANGRPO_AUTH_TOKEN is the mesh token for every command, never a config key: `serve all`
// (whose config prefix is LEANGRPO_, so the variable once read as the unknown key
// auth_token) and `serve <service>` start with it and require it; `dashboard` requires a
// token of the browser with it, and without it refuses to bind beyond loopback; a config
// that sets another token is refused by `serve all` and `train` before anything starts,
// naming both.
// Start-up only: the full runs with a token are in mesh-token-rule.spec.ts and
// lean-grpo-train.spec.ts.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { LeanVerifierService } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { OrchestratorService } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { repoRoot } from "../../../../tests/support/interop-verifier.js";

const TOKEN = "env-mesh-t0ken-31f9";
const CLI = `${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`;

function lean(args: string[], stdout: "pipe" | "ignore" = "pipe"): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: "warn", LEANGRPO_AUTH_TOKEN: TOKEN },
    stdio: ["ignore", stdout, "pipe"],
  });
}

async function codeOf(call: Promise<unknown>): Promise<Code | "ok"> {
  return call.then(
    () => "ok" as const,
    (e: unknown) => ConnectError.from(e).code,
  );
}

/** Lines of stdout up to and including the one `last` matches. */
async function linesUntil(child: ChildProcess, last: RegExp): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of createInterface({ input: child.stdout! })) {
    lines.push(line);
    if (last.test(line)) break;
  }
  return lines;
}

async function failure(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stderr };
}

const bearer = { headers: { authorization: `Bearer ${TOKEN}` } };

describe("LEANGRPO_AUTH_TOKEN in the environment", () => {
  it("serve all starts with it, says so, and every service requires it", async () => {
    const services = ["inference", "verifier", "reward", "learner", "orchestrator"];
    const child = lean(["serve", "all", ...services.flatMap((s) => [`${s}.server.port=0`, `${s}.server.shutdown.drain_delay_ms=0`])]);
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    try {
      const lines = await linesUntil(child, /^model /);
      expect(lines.find((l) => l.startsWith("auth"))).toMatch(/^auth\s+on: .* the token is LEANGRPO_AUTH_TOKEN$/);
      expect(lines.join("\n")).not.toContain(TOKEN);
      expect(stderr).not.toContain("unknown config key");
      const orchestratorUrl = lines.find((l) => l.startsWith("orchestrator "))!.split(/\s+/)[1]!;
      const orchestrator = createClient(OrchestratorService, createGrpcTransport({ baseUrl: orchestratorUrl }));
      expect(await codeOf(orchestrator.listRuns({}))).toBe(Code.Unauthenticated);
      expect(await codeOf(orchestrator.listRuns({}, bearer))).toBe("ok");
      const health = createClient(Health, createGrpcTransport({ baseUrl: orchestratorUrl }));
      expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    } finally {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  }, 60_000);

  it("serve <service> starts with it and requires it", async () => {
    const child = lean(["serve", "verifier", "server.port=0", "server.shutdown.drain_delay_ms=0"]);
    try {
      const lines = await linesUntil(child, /^auth/);
      expect(lines.at(-1)).toMatch(/the token is LEANGRPO_AUTH_TOKEN$/);
      const verifier = createClient(LeanVerifierService, createGrpcTransport({ baseUrl: lines[0]!.split(/\s+/)[1]! }));
      expect(await codeOf(verifier.poolStats({}))).toBe(Code.Unauthenticated);
      expect(await codeOf(verifier.poolStats({}, bearer))).toBe("ok");
    } finally {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  }, 60_000);

  it("dashboard requires a token of the page with it, and without it does not bind beyond loopback", async () => {
    const runsDir = mkdtempSync(path.join(tmpdir(), "dashboard-env-"));
    // Started elsewhere than the repository, so that no token file `serve` left there is found.
    const spawnIn = (token: string | undefined) =>
      spawn(
        process.execPath,
        [
          CLI,
          "dashboard",
          "--runs-dir",
          runsDir,
          "--port",
          "0",
          "--host",
          "0.0.0.0",
          "--allow-host",
          "a.example",
          "--allow-host",
          "b.example",
        ],
        {
          cwd: runsDir,
          env: {
            ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "LEANGRPO_AUTH_TOKEN")),
            ...(token ? { LEANGRPO_AUTH_TOKEN: token } : {}),
          },
          stdio: ["ignore", "ignore", "pipe"],
        },
      );
    try {
      const refused = await failure(spawnIn(undefined));
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        "--host 0.0.0.0 is beyond loopback, and the dashboard binds there only with a token to require: set LEANGRPO_AUTH_TOKEN",
      );
      const child = spawnIn(TOKEN);
      try {
        let said = "";
        for await (const line of createInterface({ input: child.stderr! })) {
          said += `${line}\n`;
          if (line.startsWith("auth")) break;
        }
        const link = /lean-grpo dashboard: (http:\/\/0\.0\.0\.0:(\d+)\/#token=[A-Za-z0-9_-]{43}) /.exec(said);
        expect(link, said).not.toBeNull();
        expect(said).toContain("auth   on: open the link above (its token is this process's own), or present LEANGRPO_AUTH_TOKEN");
        expect(said).not.toContain(TOKEN);
        const port = link![2]!;
        // Raw HTTP: fetch would send its own Host.
        const list = (host: string) =>
          new Promise<number>((resolve, reject) => {
            const req = httpRequest(
              {
                host: "127.0.0.1",
                port: Number(port),
                method: "POST",
                path: "/leangrpo.v1.OrchestratorService/ListRuns",
                headers: { "content-type": "application/json", host, authorization: `Bearer ${TOKEN}` },
              },
              (res) => {
                res.resume();
                resolve(res.statusCode!);
              },
            );
            req.on("error", reject);
            req.end("{}");
          });
        expect(await list(`127.0.0.1:${port}`)).toBe(200);
        expect(await list(`b.example:${port}`)).toBe(200);
        expect(await list(`c.example:${port}`)).toBe(421);
      } finally {
        child.kill("SIGINT");
        await once(child, "exit");
      }
    } finally {
      rmSync(runsDir, { recursive: true, force: true });
    }
  }, 60_000);

  it("serve all and train refuse a config that sets another token, naming both, before anything starts", async () => {
    const [serveAll, train] = await Promise.all([
      failure(lean(["serve", "all", "reward.server.auth.token=another-token"], "ignore")),
      failure(
        lean(
          ["train", "examples/arith.jsonl", "--config", "configs/train/arith.yaml", "services.learner.server.auth.token=another-token"],
          "ignore",
        ),
      ),
    ]);
    expect(serveAll.code).toBe(2);
    expect(serveAll.stderr).toContain("reward.server.auth.token and LEANGRPO_AUTH_TOKEN give different tokens");
    expect(train.code).toBe(2);
    expect(train.stderr).toContain("learner.server.auth.token and LEANGRPO_AUTH_TOKEN give different tokens");
    for (const { stderr } of [serveAll, train]) {
      expect(stderr).not.toContain(TOKEN);
      expect(stderr).not.toContain("another-token");
    }
  }, 60_000);
});
