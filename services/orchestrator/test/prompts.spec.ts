// A theorem's prompt as the run sends it: the template's text as the user turn of a chat (after
// prompt.system's turn when one is set), or as plain text with the system text as its first
// paragraph; whole-proof, tactic and held-out prompts alike.
import { create } from "@bufbuild/protobuf";
import { ProofFormat, TaskKind, TheoremSchema } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { describe, expect, it } from "vitest";
import { RunConfigSchema } from "../src/run/config/run-config.js";
import { withRunProofFormat } from "../src/data/proof-format.js";
import { buildPrompt, leanProofFormat, promptText } from "../src/run/rollout/prompts.js";
import { buildTacticPrompt } from "../src/run/rollout/tactic-prompt.js";

const problem = create(TheoremSchema, { id: "p1", kind: TaskKind.MATH_ANSWER, informalStatement: "What is 2 + 3?", answer: "5" });
const theorem = create(TheoremSchema, { id: "t1", statement: "theorem t (n : Nat) : n + 0 = n" });
const prompt = (system = "") => RunConfigSchema.parse({ prompt: { math_template: "{problem}", system } }).prompt;

describe("prompts with prompt.system", () => {
  it("none: the template's text is the one user turn, or the whole text", () => {
    expect(buildPrompt(problem, prompt(), true).kind).toEqual({
      case: "chat",
      value: expect.objectContaining({ messages: [expect.objectContaining({ role: "user", content: "What is 2 + 3?" })] }),
    });
    expect(buildPrompt(problem, prompt(), false).kind).toEqual({ case: "text", value: "What is 2 + 3?" });
  });

  it("a system turn before the user turn in a chat; the first paragraph of a text prompt", () => {
    const chat = buildPrompt(problem, prompt("You add."), true);
    expect(chat.kind.case === "chat" && chat.kind.value.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", "You add."],
      ["user", "What is 2 + 3?"],
    ]);
    expect(buildPrompt(problem, prompt("You add."), false).kind).toEqual({ case: "text", value: "You add.\n\nWhat is 2 + 3?" });
  });

  it("tactic turns carry it too", () => {
    const turn = buildTacticPrompt(theorem, prompt("Prove it."), true, [], ["⊢ n + 0 = n"]);
    expect(turn.kind.case === "chat" && turn.kind.value.messages.map((m) => m.role)).toEqual(["system", "user"]);
  });
});

describe("whole-file theorems", () => {
  const config = RunConfigSchema.parse({}).prompt;

  it("are asked for a complete Lean file, the statement shown with sorry; a body theorem keeps lean_template", () => {
    const file = promptText({ ...theorem, proofFormat: ProofFormat.WHOLE_FILE, imports: ["Mathlib"] }, config);
    expect(file).toBe(
      "Complete the following Lean 4 code. Write a complete Lean 4 file: any auxiliary lemmas first, then the theorem, its statement unchanged.\n" +
        "```lean4\nimport Mathlib\n\ntheorem t (n : Nat) : n + 0 = n := by\n  sorry\n```",
    );
    expect(promptText(theorem, config)).toBe("Complete the following Lean 4 proof.\n```lean4\n\n\ntheorem t (n : Nat) : n + 0 = n := by\n");
  });

  it("take the run's dataset.proof_format where their record set none; a record's own setting wins; math tasks keep none", () => {
    const own = { ...theorem, id: "own", proofFormat: ProofFormat.BODY };
    const [unset, kept, math] = withRunProofFormat([theorem, own, problem], "whole_file");
    expect(unset!.proofFormat).toBe(ProofFormat.WHOLE_FILE);
    expect(kept!.proofFormat).toBe(ProofFormat.BODY);
    expect(math!.proofFormat).toBe(ProofFormat.UNSPECIFIED);
    expect(leanProofFormat(unset!)).toEqual({ proofFormat: "whole_file" });
    expect(leanProofFormat(problem)).toEqual({});
  });
});
