// Tactic mode over the real mesh: the tiny model proposes one tactic per turn, the
// verifier runs it on a REPL stand-in (the real REPL protocol, answers by rules), and
// the assembled proof is re-checked in command mode through the reward service. Also
// the refusals before a tactic-mode run starts.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import type { StepRecord } from "@lean-grpo/orchestrator";
import { withMesh, type OrchestratorClient } from "./support/orchestrator-client.js";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";
import { replStandIn, type ReplStandIn, type Rule } from "./support/repl-stand-in.js";

// The statement of the REPL's proof_branching transcript, whose first answer opens it.
const STATEMENT = "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r";

const RULES: Rule[] = [
  // StartProof.
  { when: { cmd: { equals: `${STATEMENT} := by sorry` } }, reply: { transcript: "proof_branching", response: 0 } },
  // The re-check in command mode: a proof whose last tactic starts with 0-2 is proved; one
  // starting with 3-4 elaborates cleanly in the REPL but the kernel replay refuses it (an
  // exploit caught); any other (one ending in 5-9, which ApplyTactic calls complete) is not.
  { when: { cmd: { regex: "\\n  [0-2][^\\n]*$" } }, declares: { axioms: [] } },
  {
    when: { cmd: { regex: "\\n  [34][^\\n]*$" } },
    declares: { axioms: [] },
    replay: { refuses: "(kernel) declaration has metavariables 'complex_and'" },
  },
  { when: { cmd: { includes: "theorem complex_and" } } },
  // Tactics: a digit closes the goal, a lowercase letter leaves one, anything else is unknown.
  { when: { tactic: { regex: "^[0-9]" } }, reply: { json: { proofStatus: "Completed", proofState: 0, goals: [] } } },
  {
    when: { tactic: { regex: "^[a-z]" } },
    reply: { json: { proofStatus: "Incomplete: open goals remain", proofState: 0, goals: ["⊢ q"] } },
  },
  { when: { tactic: { regex: "" } }, reply: { transcript: "unknown_tactic", response: 1 } },
];

/** A kept sample of samples.jsonl, as far as this test reads it. */
interface KeptTacticSample {
  prompt: string;
  turns: { prompt: string; completion: string; verdict: string }[];
}

let fixture: MeshFixture;
let repl: ReplStandIn;
let dataset: string;

beforeAll(async () => {
  // Lean text: every printable ASCII character and the statement's symbols.
  const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("");
  fixture = await meshFixture({ extraChars: `${ascii}∧→⊢` });
  repl = replStandIn({ rules: RULES });
  dataset = path.join(fixture.dir, "lean.jsonl");
  await writeFile(
    dataset,
    ["and-1", "and-2"].map((id) => JSON.stringify({ id, name: "complex_and", statement: STATEMENT, imports: ["Mathlib"] })).join("\n"),
  );
});
afterAll(async () => {
  repl?.cleanup();
  await fixture?.cleanup();
});

async function withOrchestrator<T>(body: (client: OrchestratorClient) => Promise<T>): Promise<T> {
  return withMesh(await fixture.start({ verifier: repl.verifierSection }), body);
}

describe("tactic mode", () => {
  for (const async of [false, true]) {
    it(`runs trajectories of Generate and ApplyTactic, re-checks the proofs and trains on every turn${async ? " (async)" : ""}`, async () => {
      const runId = async ? "tactic-async" : "tactic";
      const logged = repl.requests().length;
      const done = await withOrchestrator(async (client) => {
        await client.startRun({
          datasetPath: path.basename(dataset),
          runId,
          config: {
            training: tinyTraining(3, { mode: "tactic", max_proof_steps: 3, seed: 3, async }),
            // The tiny model's context is 256 tokens: a short prompt.
            prompt: { tactic_template: "{statement}\n{proof}{goals}\n" },
          },
        });
        for await (const _ of client.watchRun({ runId, fromStart: true }));
        return (await client.getRun({ runId })).run!;
      });
      expect(done.error).toBe("");
      expect(done.state).toBe(RunState.COMPLETED);
      const lines = (await readFile(path.join(done.outputDir, "metrics.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as StepRecord);
      expect(lines.map((l) => l.step)).toEqual([1, 2, 3]);
      lines.forEach(({ metrics }, i) => {
        expect(metrics.proof_steps_mean).toBeGreaterThanOrEqual(0);
        expect(metrics.proof_steps_mean).toBeLessThanOrEqual(3);
        expect(metrics.proofs_not_started).toBe(0);
        expect(metrics.policy_lag).toBe(async && i > 0 ? lines[i - 1]!.metrics.trained : 0);
        for (const key of ["reward_mean", "pass_rate"]) expect(Number.isFinite(metrics[key])).toBe(true);
        // The learner trained on exactly the turns sent: one sample per generated tactic.
        if (metrics.trained === 1) expect(metrics.num_samples_trained).toBe(metrics.samples_sent);
      });
      // 2 groups × 2 trajectories a step: more samples than trajectories means several turns each.
      expect(lines.some((l) => l.metrics.samples_sent! > 4)).toBe(true);
      expect(lines.some((l) => l.metrics.trained === 1)).toBe(true);

      const requests = repl.requests().slice(logged);
      const tactics = requests.filter((r) => r.kind === "tactic");
      const starts = requests.filter((r) => r.kind === "command" && r.cmd.endsWith(":= by sorry"));
      const rechecks = requests.filter((r) => r.kind === "command" && r.cmd.startsWith(`${STATEMENT} := by\n`));
      expect(starts).toHaveLength(3 * 4);
      // Every tactic the REPL ran came from a turn; proof_steps_mean counts the turns per
      // trajectory, including the tiny model's tactics that the verifier's token screen
      // refused before Lean ran (random text often does not lex as Lean).
      const applied = Math.round(lines.reduce((n, l) => n + l.metrics.proof_steps_mean! * 4, 0));
      expect(tactics.length).toBeGreaterThan(0);
      expect(tactics.length).toBeLessThanOrEqual(applied);
      // Only proofs with at least one accepted tactic reach Verify; at least one did.
      expect(rechecks.length).toBeGreaterThan(0);
      // Each re-check the replay refused after the REPL accepted it is counted in its step.
      const refusedByReplay = rechecks.filter((r) => /\n {2}[34][^\n]*$/u.test(r.kind === "command" ? r.cmd : "")).length;
      expect(lines.reduce((n, l) => n + l.metrics.verifier_replay_refusals!, 0)).toBe(refusedByReplay);

      // The kept samples record every turn with the prompt it was sampled from as the sampler
      // was given it: the statement, the tactics accepted before it and the goals they left.
      const kept = (await readFile(path.join(done.outputDir, "samples.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .flatMap((l) => (JSON.parse(l) as { samples: KeptTacticSample[] }).samples);
      expect(kept.some((sample) => sample.turns.length > 1)).toBe(true);
      for (const sample of kept) {
        expect(sample.turns.length).toBeGreaterThan(0);
        expect(sample.prompt).toBe(sample.turns[0]!.prompt);
        expect(sample.turns[0]!.prompt).toContain("⊢ p ∧ r"); // the goal StartProof opened
        sample.turns.forEach((turn, i) => {
          expect(turn.prompt).toContain(STATEMENT);
          expect(["COMPLETED", "INCOMPLETE", "ERROR", ""]).toContain(turn.verdict);
          if (i === 0) return;
          // A next turn exists only after an accepted tactic; its prompt shows that tactic and the goal it left.
          expect(sample.turns[i - 1]!.verdict).toBe("INCOMPLETE");
          expect(turn.prompt).toContain(sample.turns[i - 1]!.completion.split("\n")[0]!.trim());
          expect(turn.prompt).toContain("⊢ q");
        });
      }
    }, 120_000);
  }

  it("refuses a math dataset, an unknown mode and a bad max_proof_steps before starting", async () => {
    await withOrchestrator(async (client) => {
      const before = (await client.listRuns({})).runs.length;
      const err = (p: Promise<unknown>) =>
        p.then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
      const math = await err(client.startRun({ datasetPath: fixture.dataset, config: { training: { mode: "tactic" } } }));
      expect(math?.code).toBe(Code.InvalidArgument);
      expect(math?.rawMessage).toMatch(/training\.mode "tactic" needs Lean theorems.*problem 1 .*math-answer.*accepted: whole, tactic/);
      const mode = await err(client.startRun({ datasetPath: path.basename(dataset), config: { training: { mode: "tactics" } } }));
      expect(mode?.code).toBe(Code.InvalidArgument);
      expect(mode?.rawMessage).toMatch(/training\.mode.*"whole" \| "tactic".*"tactics"/);
      const steps = await err(
        client.startRun({ datasetPath: path.basename(dataset), overrides: ["training.mode=tactic", "training.max_proof_steps=0"] }),
      );
      expect(steps?.code).toBe(Code.InvalidArgument);
      expect(steps?.rawMessage).toMatch(/training\.max_proof_steps.*>=1/);
      expect((await client.listRuns({})).runs).toHaveLength(before);
    });
  }, 60_000);
});
