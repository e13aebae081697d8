// Tactic sessions on a scaled verifier: `serve all --topology` with 3 verifier replicas (each
// its own process, each with a Lean REPL stand-in) and the rest of the mesh on the tiny model.
// Counted from the stand-ins' request logs, every ApplyTactic reaches the replica that answered
// its StartProof; a tactic-mode run completes while one verifier replica is killed mid-session
// (and restarted: `restart: true`), its lost sessions started again, none scored as the model's
// failure; and `lean-grpo train --url` drives a run through this topology to its summary.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { OrchestratorService, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { LeanVerifierService, TacticStatus } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { createServiceClient, ReplicaAffinity } from "@lean-grpo/kit";
import type { StepRecord } from "@lean-grpo/orchestrator";
import { loadTopology, planTopology } from "../../src/mesh/topology.js";
import { runTopology, type RunningReplica, type RunningTopology } from "../../src/mesh/topology-runner.js";
import { repoRoot } from "../../../../tests/support/interop-verifier.js";
import { writeTinyModel } from "../../../../tests/support/tiny-model.js";
import type { Rule } from "../../../../tests/fakes/lean-repl/rules.js";

/** A topology placeholder, `${urls.SERVICE}`: the list of that service's replica URLs. */
const urlsOf = (service: string) => `\${urls.${service}}`;

const STATEMENT = "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r";
const RULES: Rule[] = [
  { when: { cmd: { equals: `${STATEMENT} := by sorry` } }, reply: { transcript: "proof_branching", response: 0 } },
  { when: { cmd: { includes: "theorem complex_and" } }, declares: { axioms: [] } },
  // A digit closes the goal, a lowercase letter leaves one open, anything else is unknown to Lean.
  { when: { tactic: { regex: "^[0-9]" } }, reply: { json: { proofStatus: "Completed", proofState: 0, goals: [] } } },
  {
    when: { tactic: { regex: "^[a-z]" } },
    reply: { json: { proofStatus: "Incomplete: open goals remain", proofState: 0, goals: ["⊢ q"] } },
  },
  { when: { tactic: { regex: "" } }, reply: { transcript: "unknown_tactic", response: 1 } },
];

interface Logged {
  pid: number;
  request: { cmd?: string; tactic?: string; proofState?: number };
}

let dir: string;
let log: string;
let topology: RunningTopology;
let verifiers: RunningReplica[];
let orchestrator: RunningReplica;

/**
 * `count` consecutive free loopback ports, from a random base below Linux's ephemeral range
 * (32768+), where outgoing connections take theirs (the topology numbers its replicas' ports in a row).
 */
async function freePortRange(count: number): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer().once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
    });
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 12_000);
    let ok = true;
    for (let i = 0; i < count && ok; i++) ok = await free(base + i);
    if (ok) return base;
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "verifier-affinity-"));
  const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("");
  const modelDir = await writeTinyModel(path.join(dir, "model"), 1, `${ascii}∧→⊢`);
  const rules = path.join(dir, "rules.json");
  log = path.join(dir, "requests.jsonl");
  // 40 ms a request: sessions last long enough for a kill to land inside one.
  writeFileSync(rules, JSON.stringify({ rules: RULES, delayMs: 40 }));
  writeFileSync(
    path.join(dir, "lean.jsonl"),
    ["and-1", "and-2"].map((id) => JSON.stringify({ id, name: "complex_and", statement: STATEMENT, imports: ["Mathlib"] })).join("\n"),
  );
  writeFileSync(path.join(dir, "arith.jsonl"), readFileSync(path.join(repoRoot, "examples/arith.jsonl"), "utf8"));
  const replCommand = [process.execPath, "--import", "tsx", `${repoRoot}tests/fakes/lean-repl/main.ts`, "--rules", rules, "--log", log];
  const file = path.join(dir, "topology.yaml");
  const drain = "server.shutdown.drain_delay_ms=0";
  writeFileSync(
    file,
    JSON.stringify({
      base_port: await freePortRange(7),
      services: {
        inference: { replicas: 1, overrides: [`embedded.model_dir=${modelDir}`, "embedded.tensor_backend=cpu", drain] },
        verifier: {
          replicas: 3,
          restart: true,
          overrides: [
            `repl.command=${JSON.stringify(replCommand)}`,
            `repl.cwd=${repoRoot}`,
            "repl.pool_size=1",
            "repl.sandbox.mode=none",
            "repl.replay=off",
            "repl.memory_limit_mb=0",
            drain,
          ],
        },
        reward: { replicas: 1, overrides: [`verifier.url=${urlsOf("verifier")}`, drain] },
        learner: {
          replicas: 1,
          overrides: [
            `model.dir=${modelDir}`,
            "backend=cpu",
            "lora.rank=2",
            "lora.alpha=4",
            `checkpoint_dir=${path.join(dir, "runs")}`,
            drain,
          ],
        },
        orchestrator: {
          replicas: 1,
          overrides: [
            `services.inference=${urlsOf("inference")}`,
            `services.reward=${urlsOf("reward")}`,
            `services.learner=${urlsOf("learner")}`,
            `services.verifier=${urlsOf("verifier")}`,
            `runs_dir=${path.join(dir, "runs")}`,
            `data_root=${dir}`,
            drain,
          ],
        },
      },
    }),
  );
  // Seven processes start at once: on 2 busy cores that can take minutes.
  topology = await runTopology(planTopology(loadTopology(file)), 300_000);
  verifiers = topology.replicas.filter((r) => r.service === "verifier");
  orchestrator = topology.replicas.find((r) => r.service === "orchestrator")!;
}, 360_000);

afterAll(async () => {
  await topology?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function logged(): Logged[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Logged);
}

/** The REPL process of each verifier replica (pool_size 1), by its PoolStats. */
async function replPids(): Promise<Map<string, number>> {
  const pids = new Map<string, number>();
  for (const replica of verifiers) {
    const stats = await createClient(LeanVerifierService, createGrpcTransport({ baseUrl: replica.url })).poolStats({});
    pids.set(replica.url, stats.workerStats[0]!.pid);
  }
  return pids;
}

describe("tactic sessions on 3 verifier replicas", () => {
  it("sends every ApplyTactic to its session's replica: 4 StartProof, 3 ApplyTactic each, counted from the REPLs' logs", async () => {
    const { client, transport } = createServiceClient(LeanVerifierService, {
      endpoints: verifiers.map((r) => r.url),
      defaultTimeoutMs: 20_000,
    });
    try {
      const before = logged().length;
      const sessions: { affinity: ReplicaAffinity; id: string; state: number }[] = [];
      for (let i = 0; i < 4; i++) {
        const affinity = new ReplicaAffinity();
        const start = await client.startProof(
          { theorem: { name: "complex_and", statement: STATEMENT, imports: ["Mathlib"] } },
          affinity.open(),
        );
        sessions.push({ affinity, id: start.sessionId, state: start.proofState });
      }
      let state = new Map(sessions.map((s) => [s.id, s.state]));
      for (let round = 0; round < 3; round++) {
        for (const session of sessions) {
          const answer = await client.applyTactic(
            { sessionId: session.id, proofState: state.get(session.id)!, tactic: "intro" },
            session.affinity.pinned(),
          );
          expect(answer.status).toBe(TacticStatus.INCOMPLETE);
          state = new Map(state).set(session.id, answer.proofState!);
        }
      }
      for (const session of sessions) await client.endProof({ sessionId: session.id }, session.affinity.pinned());

      // From the logs: each REPL ran 3 tactics per session it opened, and no other.
      const pids = await replPids();
      const requests = logged().slice(before);
      const startsOn = (pid: number) => requests.filter((r) => r.pid === pid && r.request.cmd?.endsWith(":= by sorry")).length;
      const tacticsOn = (pid: number) => requests.filter((r) => r.pid === pid && r.request.tactic !== undefined).length;
      let tactics = 0;
      for (const session of sessions) expect(pids.has(session.affinity.replica!)).toBe(true);
      for (const pid of pids.values()) {
        expect(tacticsOn(pid)).toBe(3 * startsOn(pid));
        tactics += tacticsOn(pid);
      }
      expect(tactics).toBe(12);
      // The spread was real: the 4 sessions opened on 3 replicas.
      expect(new Set(sessions.map((s) => s.affinity.replica)).size).toBe(3);

      // Unpinned, the same calls land on other replicas, which say so (not "expired").
      const stray = new ReplicaAffinity();
      const start = await client.startProof({ theorem: { name: "complex_and", statement: STATEMENT, imports: ["Mathlib"] } }, stray.open());
      const codes: string[] = [];
      for (let i = 0; i < 3; i++) {
        await client.applyTactic({ sessionId: start.sessionId, proofState: start.proofState, tactic: "intro" }).then(
          () => codes.push("ok"),
          (e: unknown) => {
            const error = ConnectError.from(e);
            codes.push(Code[error.code]);
            expect(error.rawMessage).toMatch(/opened by verifier process [0-9a-f]{12}, and this is [0-9a-f]{12}/);
          },
        );
      }
      expect(codes.sort()).toEqual(["Aborted", "Aborted", "ok"]);
    } finally {
      transport.close();
    }
  }, 60_000);

  it("completes a tactic-mode run while a verifier replica is killed mid-session and restarts, starting its sessions again", async () => {
    const client = createClient(OrchestratorService, createGrpcTransport({ baseUrl: orchestrator.url }));
    const pids = await replPids();
    const victim = verifiers[1]!;
    const victimRepl = pids.get(victim.url)!;
    const victimServer = victim.pid()!;
    const before = logged().length;
    await client.startRun({
      datasetPath: "lean.jsonl",
      runId: "tactic-kill",
      config: {
        training: { steps: 2, batch_size: 2, num_generations: 3, max_tokens: 6, mode: "tactic", max_proof_steps: 3, seed: 3 },
        prompt: { tactic_template: "{statement}\n{proof}{goals}\n" },
      },
    });
    // Kill the victim's server process (not retired: the topology restarts it) as soon as its REPL runs a session's tactic.
    let killed = false;
    const watcher = setInterval(() => {
      if (killed) return;
      if (
        logged()
          .slice(before)
          .some((r) => r.pid === victimRepl && r.request.tactic !== undefined)
      ) {
        killed = true;
        process.kill(victimServer, "SIGKILL");
      }
    }, 20);
    try {
      for await (const _ of client.watchRun({ runId: "tactic-kill", fromStart: true }));
    } finally {
      clearInterval(watcher);
      // A run cut short by a failed assertion must not hold the learner for the next test.
      await client.stopRun({ runId: "tactic-kill" }).catch(() => {});
    }
    const run = (await client.getRun({ runId: "tactic-kill" })).run!;
    expect(killed).toBe(true);
    expect(run.error).toBe("");
    expect(run.state).toBe(RunState.COMPLETED);
    const steps = readFileSync(path.join(run.outputDir, "metrics.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as StepRecord);
    expect(steps.map((s) => s.step)).toEqual([1, 2]);
    // The killed replica's sessions started again from StartProof: mesh failures, counted as such.
    expect(steps.reduce((n, s) => n + s.metrics.proof_sessions_restarted!, 0)).toBeGreaterThanOrEqual(1);
    // The topology brought the replica back on its port.
    expect(victim.pid()).not.toBe(victimServer);
  }, 300_000);

  it("lean-grpo train --url drives the README's run, shortened, through this topology to its summary", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        `${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`,
        "train",
        "arith.jsonl",
        "--config",
        "configs/train/arith.yaml",
        "--url",
        orchestrator.url,
        "training.steps=2",
        "training.batch_size=2",
        "training.num_generations=2",
        "training.max_tokens=6",
        "eval.data=arith.jsonl",
        "eval.max_problems=4",
        "eval.every=1",
      ],
      { cwd: repoRoot, env: { ...process.env, LOG_LEVEL: "warn" }, timeout: 120_000 },
    );
    const lines = stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { step: number });
    expect(lines.map((l) => l.step)).toEqual([1, 2]);
    expect(stdout).toMatch(/state\s*│\s*COMPLETED/);
    expect(stdout).toMatch(/held-out\s*│\s*\d+\.\d% after step 0 -> \d+\.\d% after step 2 \(greedy, 4 problems, 3 evaluations/);
  }, 150_000);
});
