// Issue #23 end to end through gRPC: the REPL stand-in answers what Lean would, the
// checker stand-in (comparator's interface) replays what the REPL accepted, judging
// by the same rules. Three classes, several variants each, every one of which the
// verifier answered wrongly before: (1) the environment changed from inside the
// proof, (2) the screen's lexer and Lean's disagreeing, (3) honest Mathlib proofs
// refused. The honest corpus is test/fixtures/honest-mathlib-proofs.jsonl.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Verdict, VerdictTier } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { standIn, type Rule, type StandIn } from "./support/stand-in.js";
import { startVerifier, type Harness } from "./support/verifier-harness.js";

const statement = "theorem target (n : ℕ) : n + 0 = n";
const header = "import Mathlib";

/** Proofs that elaborate "cleanly" in the REPL (no axiom reported) but that the fresh-process replay refuses. */
const REPLAY_REFUSES: [string, string][] = [
  // A constant added by elaboration-time code without kernel checking: the REPL's #print axioms trusts it.
  ["by exact unchecked_false.elim", "(kernel) unknown constant 'unchecked_false'"],
  // SafeVerify's ReplaceAxiom: propext redefined, so #print axioms shows only [propext].
  ["by exact propext_replaced ▸ trivial", "(kernel) declaration type mismatch, 'propext' has type False"],
  // An opaque wrapper whose value the REPL's environment holds unchecked (comparator #39).
  ["by exact OpaqueWrapper.cheat n", "(kernel) invalid declaration, it uses unsafe declaration 'OpaqueWrapper.cheat'"],
];

const rules: Rule[] = [
  ...REPLAY_REFUSES.map(
    ([proof, refuses]): Rule => ({ when: { cmd: { includes: proof } }, declares: { axioms: [] }, replay: { refuses } }),
  ),
  // Rebuilt in a fresh process, the solution does not even compile: the REPL's environment was not the header's.
  {
    when: { cmd: { includes: "by exact poisoned_env" } },
    declares: { axioms: [] },
    replay: { refuses: "unknown identifier 'poisoned_env'", stage: "solution-build" },
  },
  { when: { cmd: { includes: "by exact slow_replay" } }, declares: { axioms: ["propext"] }, replay: { hang: true } },
  { when: { cmd: { includes: "by exact wrong_thing" } }, reply: { transcript: "dup_msg", response: 2 } },
  // Everything else that reaches Lean is an honest proof that Lean accepts.
  { when: { cmd: { regex: "^(?!#)" }, env: "given" }, declares: { axioms: ["propext", "Classical.choice", "Quot.sound"] } },
];

let repl: StandIn;
let harness: Harness;
beforeAll(async () => {
  repl = standIn({ rules });
  harness = await startVerifier({
    // A roomy limit: a checker stand-in starts node and tsx, slow on a busy machine. The time-out test has its own.
    repl: {
      command: repl.command,
      replay: "proved",
      replay_checker: { command: repl.checker.command, timeout_ms: 60_000, concurrency: 2 },
    },
    metrics: { port: 0 },
  });
});
afterAll(async () => {
  await harness?.close();
  repl?.cleanup();
});

const verify = (proof: string, theorem: Record<string, unknown> = {}) =>
  harness.client.verify({ theorem: { statement, header, ...theorem }, proof });

describe("class 1: elaboration-time code cannot change what PROVED means", () => {
  it("refuses every route from a body to elaboration-time code before Lean runs, naming the construct", async () => {
    const variants: [string, string][] = [
      ["by run_tac do Lean.modifyEnv id", "run_tac"],
      ["by my_new_mathlib_macro do\n    pure ()", "do"],
      ["by\n  set_option «debug».skipKernelTC true in exact h", "set_option debug.*/kernel.*"],
      ["by\n  set_option autoImplicit true in exact h", "set_option (not allowed in a proof)"],
      ["by\n  open Lean Elab Tactic in exact evalTactic", "metaprogramming namespace opened"],
      ["by exact addDeclCore env 0 decl none false", "environment API"],
      ["by exact myOpt `maxRecDepth 0", "name literal"],
      ["by exact Elab.Term.elabTerm stx none", "metaprogramming namespace"],
      ["by exact (by_elab pure (Lean.mkConst ``True.intro))", "by_elab"],
      ["by exact `(tactic| sorry)", "syntax quotation"],
    ];
    for (const [proof, construct] of variants) {
      const response = await verify(proof);
      expect(response.verdict, proof).toBe(Verdict.REJECTED);
      expect(response.decidedBy, proof).toBe(VerdictTier.SCREEN);
      expect(response.reason, proof).toContain(construct);
    }
  });

  it("refuses, by the kernel replay, what the REPL called PROVED, and counts each as an exploit caught", async () => {
    const before = (await harness.client.poolStats({})).replayRefusals;
    for (const [proof, refuses] of REPLAY_REFUSES) {
      const response = await verify(proof);
      expect(response.verdict, proof).toBe(Verdict.REJECTED);
      expect(response.decidedBy, proof).toBe(VerdictTier.REPLAY);
      expect(response.reason, proof).toContain("the kernel replay refused a proof the REPL accepted");
      expect(response.reason, proof).toContain(refuses);
      expect(response.timings?.replayMs, proof).toBeGreaterThan(0);
    }
    const built = await verify("by exact poisoned_env");
    expect(built).toMatchObject({ verdict: Verdict.REJECTED, decidedBy: VerdictTier.REPLAY });
    expect(built.reason).toContain("Building Solution");
    const stats = await harness.client.poolStats({});
    expect(stats.replayRefusals - before).toBe(BigInt(REPLAY_REFUSES.length + 1));
    const metrics = await (await fetch((await harness.service.metricsUrl())!)).text();
    expect(metrics).toMatch(new RegExp(`^leangrpo_verifier_replay_refusals_total ${Number(stats.replayRefusals)}$`, "mu"));
    expect(metrics).toMatch(/^leangrpo_verifier_replays_total [1-9]\d*$/mu);
  });

  it("is not PROVED when the replay runs past its time limit", async () => {
    const short = await startVerifier({
      repl: { command: repl.command, replay: "proved", replay_checker: { command: repl.checker.command, timeout_ms: 2000 } },
    });
    try {
      const response = await short.client.verify({ theorem: { statement, header }, proof: "by exact slow_replay" });
      expect(response).toMatchObject({ verdict: Verdict.TIMEOUT, decidedBy: VerdictTier.REPLAY });
    } finally {
      await short.close();
    }
  }, 30_000);

  it("stops a replay under way when the verifier shuts down (its checker's process group is killed)", async () => {
    const stopping = await startVerifier({
      repl: { command: repl.command, replay: "proved", replay_checker: { command: repl.checker.command } },
    });
    const before = repl.replays().length;
    const call = stopping.client.verify({ theorem: { statement, header }, proof: "by exact slow_replay" }).catch(() => undefined);
    while (repl.replays().length === before) await new Promise((resolve) => setTimeout(resolve, 50));
    const { pid } = repl.replays().at(-1)!;
    await stopping.close();
    await call;
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 40 && alive(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(alive()).toBe(false);
  }, 60_000);

  it("replays the service's own challenge beside the accepted solution, with the standard axioms", async () => {
    const response = await verify("by simp", { context: "namespace Outer" });
    expect(response).toMatchObject({ verdict: Verdict.PROVED, decidedBy: VerdictTier.REPLAY });
    const replay = repl.replays().at(-1)!;
    expect(replay.config.theorem_names).toEqual(["Outer.target"]);
    expect(replay.challenge).toBe(`import Mathlib\n\nnamespace Outer\n\n${statement} := by\n  sorry\n`);
    expect(replay.solution).toBe(`import Mathlib\n\nnamespace Outer\n${statement} := by simp\n`);
  });

  it("leaves a REPL refusal to the REPL (no replay paid for it)", async () => {
    const replays = repl.replays().length;
    const response = await verify("by exact wrong_thing");
    expect(response).toMatchObject({ verdict: Verdict.ERROR, decidedBy: VerdictTier.REPL });
    expect(repl.replays()).toHaveLength(replays);
  });
});

describe("class 2: the screen reads a body as Lean does, with the environment's token table", () => {
  it("asks Lean for the header's table once and reports where it came from", async () => {
    await verify("by simp");
    const stats = await harness.client.poolStats({});
    expect(stats.tokenTables).toEqual({ [header]: "environment" });
    // Once per header and pool (each verifier here has one worker process, so once per process).
    const queries = repl.requests().filter((r) => r.request.kind === "command" && r.request.cmd.includes("getTokenTable"));
    const perProcess = new Map<number, number>();
    for (const query of queries) perProcess.set(query.pid, (perProcess.get(query.pid) ?? 0) + 1);
    expect(queries.length).toBeGreaterThan(0);
    expect([...perProcess.values()].every((n) => n === 1)).toBe(true);
  });

  it("finds the command a quote-ended token would hide in a 'string'", async () => {
    const variants: [string, string][] = [
      ['by exact h ×\'"\'"#exit\n  -- "', "#exit"],
      ['by exact f ⁻¹\'"\'"#eval IO.println 1\n  -- "', "#eval"],
      ['by exact g ∑\'"\'"\nrun_cmd pure ()\n  -- "', "run_cmd"],
      ['by exact foo "{#eval 1}"', "#eval"],
      ['by exact bar "{" "\ntheorem target (n : ℕ) : n + 0 = n := sorry\n-- "', "theorem"],
    ];
    for (const [proof, construct] of variants) {
      const response = await verify(proof);
      expect(response.verdict, proof).toBe(Verdict.REJECTED);
      expect(response.reason, proof).toContain(construct);
    }
  });
});

// Through the screen and the REPL on the environment's token table; the replay tier (on
// above, proving `by simp`) only re-checks what these pass, so it is off here to keep
// 40 checker processes out of the test's time.
describe("class 3: honest Mathlib proofs are PROVED", () => {
  let honest: Harness;
  beforeAll(async () => {
    honest = await startVerifier({ repl: { command: repl.command, replay: "off" } });
  });
  afterAll(async () => {
    await honest?.close();
  });

  const corpus = readFileSync(new URL("./fixtures/honest-mathlib-proofs.jsonl", import.meta.url), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { name: string; statement: string; proof: string; header: string });

  it(`proves all ${corpus.length} of the corpus`, async () => {
    const items = corpus.map((record) => ({ theorem: { statement: record.statement, header: record.header }, proof: record.proof }));
    const results = new Map<number, { verdict: Verdict; decidedBy: VerdictTier; reason: string }>();
    for await (const { index, result } of honest.client.verifyBatch({ items })) results.set(index, result!);
    const refused = corpus
      .map((record, i) => ({ name: record.name, ...results.get(i)! }))
      .filter((result) => result.verdict !== Verdict.PROVED)
      .map((result) => `${result.name}: ${Verdict[result.verdict]} ${result.reason}`);
    expect(refused).toEqual([]);
    expect(corpus.length).toBeGreaterThanOrEqual(34);
  }, 60_000);
});
