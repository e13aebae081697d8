// The real REPL traffic of lean-repl-transcripts/ (leanprover-community/repl's own
// tests, toolchain v4.33.0-rc2): every response parses into the service's types with
// nothing dropped; the same bytes arrive intact through a pipe from a process; and
// sorry, error and success responses get the right verdicts.
import { describe, expect, it } from "vitest";
import { createLogger } from "@lean-grpo/kit";
import { TacticStatus, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { loadTranscripts } from "../../../tests/fakes/lean-repl/transcripts.js";
import { parseResponse, type ReplRequest, type ReplResponse } from "../src/repl/protocol.js";
import { ReplFailure } from "../src/repl/repl-failure.js";
import { ReplProcess } from "../src/repl/repl-process.js";
import { classifyProof } from "../src/verdict/classify-verdict.js";
import { readTacticOutcome } from "../src/tactic/tactic-outcome.js";
import { REPO_ROOT, STAND_IN, TRANSCRIPTS } from "./support/stand-in.js";

const transcripts = loadTranscripts();

function response(name: string, index: number): ReplResponse {
  const transcript = transcripts.find((t) => t.name === name);
  if (!transcript) throw new Error(`no transcript ${name}`);
  return parseResponse(JSON.parse(transcript.responses[index]!))!;
}

describe("every transcript response", () => {
  it("parses into the service's types with nothing dropped", () => {
    const kinds = new Map<string, number>();
    let count = 0;
    for (const transcript of transcripts) {
      for (const [i, text] of transcript.responses.entries()) {
        const json: unknown = JSON.parse(text);
        const parsed = parseResponse(json);
        expect(parsed, `${transcript.name} #${i}`).toBeDefined();
        // zod objects drop keys they do not know: equality proves every key is known.
        expect(parsed!.response, `${transcript.name} #${i}`).toStrictEqual(json);
        kinds.set(parsed!.kind, (kinds.get(parsed!.kind) ?? 0) + 1);
        count++;
      }
    }
    expect(transcripts.length).toBeGreaterThanOrEqual(59);
    expect(count).toBeGreaterThanOrEqual(150);
    expect([...kinds.keys()].sort()).toEqual(["command", "error", "proofStep"]);
  });

  it("arrives intact through a pipe from a process replaying the transcripts", async () => {
    // The requests the service sends (commands and tactics); file and pickle requests it never sends.
    const sendable = transcripts.filter((t) =>
      t.requests.every((request) => {
        const value = JSON.parse(request) as Record<string, unknown>;
        return "cmd" in value || "tactic" in value;
      }),
    );
    expect(sendable.length).toBeGreaterThanOrEqual(40);
    const repl = new ReplProcess({
      argv: [process.execPath, "--import", "tsx", STAND_IN, ...sendable.flatMap((t) => ["--replay", `${TRANSCRIPTS}${t.name}.in`])],
      cwd: REPO_ROOT,
      env: process.env,
      maxResponseChars: 1 << 20,
      logger: createLogger("test"),
    });
    try {
      for (const transcript of sendable) {
        for (const [i, request] of transcript.requests.entries()) {
          const answer = await repl.send(JSON.parse(request) as ReplRequest, { deadline: Date.now() + 20_000 });
          expect(answer.response, `${transcript.name} #${i}`).toStrictEqual(JSON.parse(transcript.responses[i]!));
        }
      }
    } finally {
      repl.kill(new ReplFailure("shutdown", "test over"));
      await repl.exited;
    }
  }, 60_000);
});

describe("verdicts of real responses", () => {
  const standard = (name: string, env: number): ReplResponse => ({
    kind: "command",
    response: {
      env,
      messages: [
        { severity: "info", pos: { line: 1, column: 0 }, endPos: { line: 1, column: 6 }, data: `'${name}' depends on axioms: [propext]` },
      ],
    },
  });
  const judge = (proof: ReplResponse, name = "t") =>
    classifyProof({
      proof,
      axioms: standard(name, proof.kind === "command" ? proof.response.env + 1 : 0),
      theoremName: name,
      fullName: name,
      proofStart: { line: 1, column: 0 },
    });

  it("success: no messages and the theorem's axioms are standard", () => {
    expect(judge(response("mathlib/H20231020", 1), "mathd_numbertheory_188").verdict).toBe(Verdict.PROVED);
    expect(judge(response("line_breaks", 2), "bar").verdict).toBe(Verdict.PROVED);
    const withTactics = judge(response("all_tactics-20250622", 0));
    expect(withTactics.verdict).toBe(Verdict.PROVED);
    expect(withTactics.progress).toEqual({ tacticsTotal: 1, tacticsValidBeforeFirstError: 1, goalsRemaining: 0, errorCount: 0 });
  });

  it("sorry: INCOMPLETE, with the sorry's goal", () => {
    for (const [name, index] of [
      ["tactic_sorry", 0],
      ["variables", 2],
      ["calc", 0],
      ["line_breaks", 1],
      ["mathlib/line_breaks", 1],
      ["dup_sorries", 1],
    ] as const) {
      const judgement = judge(response(name, index));
      expect(judgement.verdict, name).toBe(Verdict.INCOMPLETE);
      expect(judgement.reason, name).toBe("the proof contains sorry");
      expect(judgement.goals.length, name).toBeGreaterThan(0);
    }
  });

  it("unsolved goals: INCOMPLETE with the goals left", () => {
    const judgement = judge(response("mathlib/H20231115_3", 1));
    expect(judgement.verdict).toBe(Verdict.INCOMPLETE);
    expect(judgement.progress.goalsRemaining).toBe(2);
  });

  it("errors: ERROR with Lean's first message", () => {
    const cases: [string, number, string][] = [
      ["dup_msg", 2, "Unknown identifier `g` (at 1:7)"],
      ["synthesize_placeholder", 0, "don't know how to synthesize placeholder (at 1:15)"],
      ["self_proof_exact_check", 0, "fail to show termination for (at 1:8)"],
      ["app_type_mismatch", 0, "(kernel) declaration has metavariables '_example' (at 1:0)"],
      ["no_goal_sorry", 0, "type expected, got (at 2:11)"],
      ["line_breaks", 0, "unexpected token 'sorry'; expected command (at 2:0)"],
      ["invalid_line_break", 0, "Unknown identifier `bysorry` (at 1:23)"],
      ["mathlib/placeholder_synthesis", 1, "don't know how to synthesize placeholder (at 3:19)"],
      ["self_proof_check", 0, "`exact?` could not close the goal. Try `apply?` to see partial suggestions. (at 1:25)"],
    ];
    for (const [name, index, reason] of cases) {
      const judgement = judge(response(name, index));
      expect(judgement.verdict, name).toBe(Verdict.ERROR);
      expect(judgement.reason, name).toBe(reason);
    }
  });

  it("REPL errors: ERROR naming the REPL's message", () => {
    expect(judge(response("unknown_environment", 0)).reason).toBe("the REPL did not elaborate the proof: Unknown environment.");
  });
});

describe("tactic outcomes of real responses", () => {
  it("maps proof states to COMPLETED, INCOMPLETE and ERROR", () => {
    const cases: [string, number, TacticStatus][] = [
      ["proof_branching", 1, TacticStatus.INCOMPLETE],
      ["proof_branching", 4, TacticStatus.COMPLETED],
      ["readme", 2, TacticStatus.COMPLETED],
      ["mathlib/induction", 3, TacticStatus.INCOMPLETE],
      ["tactic_mode_sorry", 1, TacticStatus.INCOMPLETE],
      ["app_type_mismatch", 4, TacticStatus.INCOMPLETE],
      ["unknown_tactic", 1, TacticStatus.ERROR],
      ["self_proof_check", 2, TacticStatus.ERROR],
      ["self_proof_apply_check", 2, TacticStatus.ERROR],
      ["name_generator", 7, TacticStatus.ERROR],
      ["mathlib/20240209", 1, TacticStatus.ERROR],
      ["unknown_proof_state", 1, TacticStatus.ERROR],
    ];
    for (const [name, index, status] of cases) {
      const outcome = readTacticOutcome(response(name, index));
      expect(outcome.status, `${name} #${index}`).toBe(status);
      expect(outcome.proofState === undefined, `${name} #${index}`).toBe(status === TacticStatus.ERROR);
    }
  });
});
