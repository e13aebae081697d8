// bench/scale/verifier: verification throughput at 1, 2 and 4 verifier replicas in one run,
// each replica its own process with the REPL stand-in as its Lean, made latency-bound (every
// answer takes a fixed time, as a worker waits on Lean) so that 2 cores are not the limit.
// The load is the kit's balanced client, as the reward service and the orchestrator call the
// verifiers, kept closed-loop at 2 calls per REPL worker in the fleet. Two workloads:
//  - Verify (whole proofs, two REPL answers each): calls/s;
//  - tactic sessions (StartProof, 3 ApplyTactic pinned to the session's replica, EndProof):
//    sessions/s, every ApplyTactic checked to have succeeded on its own replica.
// Each figure is printed beside one replica's from the same run: goal >= 0.9 x N up to N = 4.
// Usage: npx tsx bench/scale/verifier.ts [SECONDS]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LeanVerifierService, TacticStatus, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { createServiceClient, ReplicaAffinity } from "@lean-grpo/kit";
import type { RulesFile } from "../../tests/fakes/lean-repl/rules.js";
import { BENCH_REQUEST, benchRules } from "../verifier/bench-request.js";
import { startVerifierFleet } from "./support/verifier-fleet.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const seconds = Number(process.argv[2] ?? process.env.BENCH_SECONDS ?? 8);
const REPLICAS = [1, 2, 4];
const POOL_SIZE = 2;
/** Time the stand-in takes for every answer: long beside the CPU a call costs, as Lean's time is. */
const DELAY_MS = 200;
const STATEMENT = "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r";
const THEOREM = { name: "complex_and", statement: STATEMENT, imports: ["Mathlib"] };

const rules: RulesFile = {
  rules: [
    ...benchRules().rules,
    { when: { cmd: { equals: `${STATEMENT} := by sorry` } }, reply: { transcript: "proof_branching", response: 0 } },
    { when: { tactic: { regex: "" } }, reply: { json: { proofStatus: "Incomplete: open goals remain", proofState: 0, goals: ["⊢ q"] } } },
  ],
  delayMs: DELAY_MS,
};

type Client = ReturnType<typeof createServiceClient<typeof LeanVerifierService>>["client"];

/** Runs `work` in `concurrency` closed loops: a warm-up second, then `seconds` counted. */
async function closedLoop(concurrency: number, work: () => Promise<void>): Promise<{ perSecond: number; done: number; errors: number }> {
  let counting = false;
  let stop = false;
  let done = 0;
  let errors = 0;
  const loops = Array.from({ length: concurrency }, async () => {
    while (!stop) {
      try {
        await work();
        if (counting) done++;
      } catch {
        if (counting) errors++;
      }
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  counting = true;
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  counting = false;
  const elapsed = (performance.now() - started) / 1000;
  stop = true;
  await Promise.all(loops);
  return { perSecond: done / elapsed, done, errors };
}

async function verifyOnce(client: Client): Promise<void> {
  const response = await client.verify(BENCH_REQUEST);
  if (response.verdict !== Verdict.PROVED) throw new Error(`verdict ${Verdict[response.verdict]}`);
}

async function sessionOnce(client: Client): Promise<void> {
  const affinity = new ReplicaAffinity();
  const start = await client.startProof({ theorem: THEOREM }, affinity.open());
  let state = start.proofState;
  try {
    for (let i = 0; i < 3; i++) {
      const answer = await client.applyTactic({ sessionId: start.sessionId, proofState: state, tactic: "intro" }, affinity.pinned());
      if (answer.status !== TacticStatus.INCOMPLETE || answer.proofState === undefined) throw new Error("tactic failed");
      state = answer.proofState;
    }
  } finally {
    await client.endProof({ sessionId: start.sessionId }, affinity.pinned());
  }
}

const round = (x: number, digits = 1) => Number(x.toFixed(digits));

const dir = mkdtempSync(join(tmpdir(), "bench-scale-verifier-"));
try {
  const rulesFile = join(dir, "rules.json");
  writeFileSync(rulesFile, JSON.stringify(rules));
  const standIn = [process.execPath, "--import", "tsx", join(repoRoot, "tests/fakes/lean-repl/main.ts"), "--rules", rulesFile];
  const rows: { replicas: number; verify: Awaited<ReturnType<typeof closedLoop>>; sessions: Awaited<ReturnType<typeof closedLoop>> }[] = [];
  for (const replicas of REPLICAS) {
    const fleet = await startVerifierFleet({ replicas, poolSize: POOL_SIZE, repoRoot, standIn });
    const { client, transport } = createServiceClient(LeanVerifierService, { endpoints: fleet.urls, defaultTimeoutMs: 30_000 });
    try {
      const concurrency = 2 * POOL_SIZE * replicas;
      const verify = await closedLoop(concurrency, () => verifyOnce(client));
      const sessions = await closedLoop(concurrency, () => sessionOnce(client));
      rows.push({ replicas, verify, sessions });
    } finally {
      transport.close();
      await fleet.stop();
    }
  }
  const [one] = rows;
  /** `answers`: REPL answers per unit of work; the ceiling is every worker answering back to back. */
  const table = (pick: (row: (typeof rows)[number]) => Awaited<ReturnType<typeof closedLoop>>, answers: number) =>
    rows.map((row) => {
      const ratio = pick(row).perSecond / pick(one!).perSecond;
      return {
        replicas: row.replicas,
        perSecond: round(pick(row).perSecond, 2),
        latencyBoundCeilingPerSecond: round((row.replicas * POOL_SIZE * 1000) / (answers * DELAY_MS), 2),
        oneReplicaPerSecond: round(pick(one!).perSecond, 2),
        ratioToOneReplica: round(ratio, 2),
        goal: round(0.9 * row.replicas, 2),
        meetsGoal: ratio >= 0.9 * row.replicas,
        errors: pick(row).errors,
      };
    });
  console.log(
    JSON.stringify(
      {
        benchmark: "scale/verifier",
        method: "kit balanced client over N verifier processes (gRPC, loopback); REPL stand-in answering in a fixed time",
        cores: availableParallelism(),
        loadAverage1m: round(loadavg()[0]!, 2),
        secondsPerPoint: seconds,
        replPoolSizePerReplica: POOL_SIZE,
        standInMsPerAnswer: DELAY_MS,
        concurrency: "2 calls per REPL worker in the fleet",
        // Whole proofs: two REPL answers per Verify (the proof, #print axioms).
        verifyCallsPerSecond: table((r) => r.verify, 2),
        // StartProof + 3 ApplyTactic pinned to the session's replica + EndProof.
        tacticSessionsPerSecond: table((r) => r.sessions, 4),
      },
      null,
      2,
    ),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
