// Every service that takes a theorem, served for real on loopback and wired as a mesh
// wires them: the verifier, its Lean REPL workers being the REPL stand-in of
// tests/fakes/lean-repl (which logs every request it receives), the reward service
// calling that verifier, and the orchestrator driving both. The stand-in elaborates
// whatever reaches it cleanly, as a REPL that ran the code would: only the screen
// stands between a theorem and Lean.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@connectrpc/connect";
import { LeanVerifierService } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { OrchestratorService } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { createServiceClient, serve, type RunningServer } from "@lean-grpo/kit";
import { createOrchestratorService, OrchestratorConfigSchema } from "@lean-grpo/orchestrator";
import { createRewardService, RewardConfigSchema } from "@lean-grpo/reward";
import { createVerifierService, VerifierConfigSchema } from "@lean-grpo/verifier";
import type { Rule } from "../fakes/lean-repl/rules.js";
import { repoRoot } from "../support/interop-verifier.js";

const STAND_IN = join(repoRoot, "tests/fakes/lean-repl/main.ts");
const SERVER = { port: 0, shutdown: { drain_delay_ms: 0, grace_period_ms: 1000 } };

export interface LeanTextMesh {
  verifier: Client<typeof LeanVerifierService>;
  reward: Client<typeof RewardService>;
  orchestrator: Client<typeof OrchestratorService>;
  /** The orchestrator's data_root: dataset files written here are reachable by StartRun's and Evaluate's dataset_path. */
  dataRoot: string;
  /** The text of every command and tactic the REPL stand-in received, in order. */
  replInputs(): string[];
  close(): Promise<void>;
}

/** `rules`: answers that come before the default one (tests/fakes/lean-repl/rules.ts), for what a test needs Lean to say. */
export async function startLeanTextMesh(rules_: readonly Rule[] = []): Promise<LeanTextMesh> {
  const dir = mkdtempSync(join(tmpdir(), "lean-text-mesh-"));
  const rules = join(dir, "rules.json");
  const log = join(dir, "requests.jsonl");
  // Every command on a header's environment elaborates cleanly and declares its theorem with no axiom.
  writeFileSync(
    rules,
    JSON.stringify({ rules: [...rules_, { when: { cmd: { regex: "^(?!#print axioms)" }, env: "given" }, declares: { axioms: [] } }] }),
  );
  const servers: RunningServer[] = [];
  const closers: (() => Promise<void> | void)[] = [];
  const served = async (name: string, registration: Parameters<typeof serve>[0]["services"][number]) => {
    const server = await serve({ name, services: [registration], config: SERVER });
    servers.push(server);
    return server.url;
  };
  const client = <S extends Parameters<typeof createServiceClient>[0]>(service: S, url: string) => {
    const { client, transport } = createServiceClient(service, { endpoints: [url], retry: { maxAttempts: 1 } });
    closers.push(() => transport.close());
    return client;
  };

  const verifierService = createVerifierService(
    VerifierConfigSchema.parse({
      server: SERVER,
      repl: {
        command: [process.execPath, "--import", "tsx", STAND_IN, "--rules", rules, "--log", log],
        cwd: repoRoot,
        pool_size: 1,
        timeout_ms: 10_000,
        header_timeout_ms: 20_000,
        memory_limit_mb: 0,
        replay: "off",
        // The stand-in reads its rules and writes its log where a sandbox would not let it.
        sandbox: { mode: "none" },
      },
    }),
  );
  const verifierUrl = await served("verifier", verifierService);
  const rewardUrl = await served(
    "reward",
    createRewardService(RewardConfigSchema.parse({ server: SERVER, verifier: { url: verifierUrl } })),
  );
  const orchestratorUrl = await served(
    "orchestrator",
    createOrchestratorService(
      OrchestratorConfigSchema.parse({
        server: SERVER,
        runs_dir: join(dir, "runs"),
        data_root: dir,
        services: { reward: rewardUrl, verifier: verifierUrl },
      }),
    ),
  );

  return {
    verifier: client(LeanVerifierService, verifierUrl),
    reward: client(RewardService, rewardUrl),
    orchestrator: client(OrchestratorService, orchestratorUrl),
    dataRoot: dir,
    replInputs: () =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .split("\n")
            .filter((line) => line !== "")
            .map((line) => {
              const { request } = JSON.parse(line) as { request: { cmd?: string; tactic?: string } };
              return request.cmd ?? request.tactic ?? "";
            })
        : [],
    async close() {
      for (const close of closers.splice(0)) await close();
      for (const server of servers.reverse()) await server.shutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
