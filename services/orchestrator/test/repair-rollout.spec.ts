// Repair mode against scripted clients: which trajectories get a second attempt, the exact
// token ids each turn continues from (prompt + sampled ids + the feedback turn tokenised once
// with the chat template's markers), the one training sample per trajectory with its mask,
// the reward with the per-turn discount, the feedback texts and their token bound, and what
// the samples file keeps. The real mesh (REPL stand-in, vLLM stand-in) is repair-mesh.spec.ts
// and apps/lean-grpo/test/repair-run.spec.ts.
import { create } from "@bufbuild/protobuf";
import { CompletionSchema, FinishReason, TaskKind, TheoremSchema, type Prompt } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { GenerateRequest } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { RewardResultSchema, type ScoreGroupRequest } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { Severity, Verdict, VerifyResponseSchema } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { describe, expect, it } from "vitest";
import type { MeshClients } from "../src/run/mesh-clients.js";
import { heldoutAccuracy } from "../src/run/training/heldout-eval.js";
import { feedbackText, MATH_FEEDBACK } from "../src/run/rollout/repair-feedback.js";
import { evalTurns } from "../src/run/training/heldout-context.js";
import { repairEvalSummary } from "../src/run/outputs/repair-metrics.js";
import { ENVIRONMENT_LOGPROB, repairRolloutGroup } from "../src/run/rollout/repair-rollout.js";
import type { RolloutContext } from "../src/run/rollout/rollout.js";
import { RunConfigSchema } from "../src/run/config/run-config.js";
import { heldoutMetrics } from "../src/run/outputs/step-record.js";
import { pickSamples } from "../src/run/training/step-samples.js";
import { trainingStream } from "../src/run/training/training-stream.js";

const BOS = 1;
const EOS = 2;
/** A character tokenizer that puts BOS before every text, as Llama's does (the rollout must strip it from the feedback turn). */
const encode = (text: string) => [BOS, ...[...text].map((c) => 10 + c.codePointAt(0)!)];
const chatml = (messages: { role: string; content: string }[]) =>
  `${messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join("")}<|im_start|>assistant\n`;

const problem = create(TheoremSchema, { id: "p1", informalStatement: "What is 40 + 2?", answer: "42", kind: TaskKind.MATH_ANSWER });

/**
 * Attempts by trajectory: turn 1 is the first element. Trajectory 0 is right at once, 1 is
 * repaired on turn 2, 2 never is (3 turns), 3 is repaired on turn 3. Turn-1 attempts end
 * with EOS (a stop by the end token, which the feedback turn must not repeat) except 2's, cut by max_tokens.
 */
const SCRIPT = [
  ["\\boxed{42}"],
  ["\\boxed{41}", "\\boxed{42}"],
  ["\\boxed{7}", "\\boxed{8}", "\\boxed{9}"],
  ["\\boxed{40}", "\\boxed{43}", "\\boxed{42}"],
];

function scripted() {
  const generates: GenerateRequest[] = [];
  const scored: ScoreGroupRequest[] = [];
  const tokenized: Prompt[] = [];
  const completionOf = (index: number, text: string, length: boolean) =>
    create(CompletionSchema, {
      index,
      text,
      tokenIds: length ? encode(text).slice(1) : [...encode(text).slice(1), EOS],
      logprobs: [...text, ...(length ? [] : ["eos"])].map((_, i) => -0.1 * (i + 1)),
      finishReason: length ? FinishReason.LENGTH : FinishReason.STOP,
      policyVersion: 5n,
    });
  const clients = {
    inference: {
      async generate(request: GenerateRequest) {
        generates.push(request);
        const kind = request.prompt!.kind;
        if (kind.case === "chat") {
          const promptTokenIds = encode(chatml(kind.value.messages.map((m) => ({ role: m.role, content: m.content }))));
          return { promptTokenIds, completions: SCRIPT.map((attempts, i) => completionOf(i, attempts[0]!, i === 2)) };
        }
        if (kind.case !== "tokenIds") throw new Error(`unexpected prompt ${kind.case}`);
        const [, , trajectory, turn] = request.requestId.split("/");
        const t = Number(trajectory!.slice(1));
        const text = SCRIPT[t]![Number(turn!.slice(4)) - 1] ?? "sorry";
        return { promptTokenIds: kind.value.ids, completions: [completionOf(0, text, false)] };
      },
      async tokenize({ prompt }: { prompt: Prompt }) {
        tokenized.push(prompt);
        const kind = prompt.kind;
        const text =
          kind.case === "chat" ? chatml(kind.value.messages.map((m) => ({ role: m.role, content: m.content }))) : String(kind.value ?? "");
        // <|im_end|> is one token (EOS), as a special token is.
        const ids = [BOS];
        for (const part of text.split(/(<\|im_end\|>)/u)) ids.push(...(part === "<|im_end|>" ? [EOS] : encode(part).slice(1)));
        return { tokenIds: ids, templatedText: text };
      },
    },
    reward: {
      async scoreGroup(request: ScoreGroupRequest) {
        scored.push(request);
        const results = request.completions.map((c) =>
          create(RewardResultSchema, { reward: c.text.includes("{42}") ? 1 : 0, solved: c.text.includes("{42}") }),
        );
        return { results, rewardMean: 0, rewardStd: 0, passRate: 0 };
      },
    },
    withRetry: <T>(_service: string, call: () => Promise<T>) => call(),
  } as unknown as MeshClients;
  return { clients, generates, scored, tokenized };
}

function context(clients: MeshClients, overrides: Record<string, unknown> = {}): RolloutContext {
  const config = RunConfigSchema.parse({
    training: { mode: "repair", num_generations: 4, max_tokens: 16, temperature: 1 },
    rollout: { max_turns: 3, turn_discount: 0.5, ...overrides },
    prompt: { math_template: "{problem}", feedback_template: "{feedback} {problem}" },
  });
  return { clients, config, runId: "run", step: 1, adapter: "policy-v5", chatPrompts: true };
}

describe("repair rollouts", () => {
  it("continues each failed trajectory on its exact token ids with the feedback turn between, up to max_turns", async () => {
    const { clients, generates, scored } = scripted();
    const group = await repairRolloutGroup(context(clients), problem, "s1-g0", 7);

    // Turn 1: one Generate of 4; turn 2: trajectories 1, 2, 3; turn 3: 2 and 3 (1 was repaired).
    const continued = generates.filter((g) => g.prompt!.kind.case === "tokenIds");
    expect(generates[0]!.n).toBe(4);
    expect(continued.map((g) => g.requestId)).toEqual([
      "run/s1-g0/t1/turn2",
      "run/s1-g0/t2/turn2",
      "run/s1-g0/t3/turn2",
      "run/s1-g0/t2/turn3",
      "run/s1-g0/t3/turn3",
    ]);
    expect(new Set(continued.map((g) => g.sampling!.seed)).size).toBe(5);
    // Every attempt went through ScoreGroup: 4, then 3, then 2.
    expect(scored.map((s) => s.completions.length)).toEqual([4, 3, 2]);
    expect(scored.map((s) => s.groupId)).toEqual(["s1-g0", "s1-g0/turn2", "s1-g0/turn3"]);

    const prompt = encode(chatml([{ role: "user", content: "What is 40 + 2?" }]));
    const feedback = (afterEos: boolean) => {
      // The user turn, tokenised once; the end-of-turn token only when the attempt did not sample it.
      const turn = [
        EOS,
        ...encode(`\n<|im_start|>user\n${MATH_FEEDBACK} What is 40 + 2?`).slice(1),
        EOS,
        ...encode("\n<|im_start|>assistant\n").slice(1),
      ];
      return afterEos ? turn.slice(1) : turn;
    };
    const attempt = (text: string, eos = true) => [...encode(text).slice(1), ...(eos ? [EOS] : [])];
    // Trajectory 2: turn 1 was cut by max_tokens (no EOS): its feedback turn closes the assistant turn itself.
    const t2turn2 = [...prompt, ...attempt("\\boxed{7}", false), ...feedback(false)];
    const ids = (g: GenerateRequest) => (g.prompt!.kind.case === "tokenIds" ? g.prompt!.kind.value.ids : []);
    expect(ids(continued[0]!)).toEqual([...prompt, ...attempt("\\boxed{41}"), ...feedback(true)]);
    expect(ids(continued[1]!)).toEqual(t2turn2);
    expect(ids(continued[3]!)).toEqual([...t2turn2, ...attempt("\\boxed{8}"), ...feedback(true)]);

    // One training sample per trajectory: turn-1 prompt ids, all turns' ids, feedback masked out.
    expect(group.samples).toHaveLength(4);
    for (const sample of group.samples) expect(sample.promptTokenIds).toEqual(prompt);
    const t1 = group.samples[1]!;
    expect(t1.completion.tokenIds).toEqual([...attempt("\\boxed{41}"), ...feedback(true), ...attempt("\\boxed{42}")]);
    expect(t1.completionMask).toEqual([
      ...attempt("\\boxed{41}").map(() => true),
      ...feedback(true).map(() => false),
      ...attempt("\\boxed{42}").map(() => true),
    ]);
    expect(t1.completion.logprobs).toHaveLength(t1.completion.tokenIds.length);
    t1.completionMask!.forEach((model, i) => {
      if (!model) expect(t1.completion.logprobs[i]).toBe(ENVIRONMENT_LOGPROB);
    });
    const t2 = group.samples[2]!;
    expect(t2.completion.tokenIds).toEqual([
      ...t2turn2.slice(prompt.length),
      ...attempt("\\boxed{8}"),
      ...feedback(true),
      ...attempt("\\boxed{9}"),
    ]);
    expect(group.samples[0]!.completionMask).toEqual(attempt("\\boxed{42}").map(() => true));

    // Reward: the final verdict, halved per extra attempt when solved (turn_discount 0.5).
    expect(group.rewards).toEqual([1, 0.5, 0, 0.25]);
    expect(group.samples.map((s) => s.reward)).toEqual([1, 0.5, 0, 0.25]);
    expect(group.solved).toEqual([true, true, false, true]);
    expect(group.repair).toEqual({ turns: [1, 2, 3, 3], solvedFirst: [true, false, false, false] });
  });

  it("sends the mask with each trajectory's sample, and keeps each attempt with the feedback after it in the samples file", async () => {
    const { clients } = scripted();
    const ctx = context(clients, { max_turns: 2, turn_discount: 1 });
    const group = await repairRolloutGroup(ctx, problem, "s1-g0", 7);
    const stream = [];
    for await (const message of trainingStream("run", ctx.config, [group])) stream.push(message);
    const samples = stream.flatMap((m) => (m.part?.case === "sample" ? [m.part.value] : []));
    expect(samples.map((s) => s.completionMask)).toEqual(group.samples.map((s) => s.completionMask));
    expect(samples[1]!.completionMask!.filter((m) => !m).length).toBeGreaterThan(0);

    const kept = pickSamples([group.readable!], 4);
    const repaired = kept.find((s) => s.turns?.length === 2 && s.solved)!;
    expect(repaired.completion).toBe("\\boxed{42}");
    expect(repaired.turns!.map((t) => [t.completion, t.solved])).toEqual([
      ["\\boxed{41}", false],
      ["\\boxed{42}", true],
    ]);
    expect(repaired.turns![0]!.feedback).toContain(`<|im_start|>user\n${MATH_FEEDBACK} What is 40 + 2?<|im_end|>`);
    expect(repaired.turns![1]!.feedback).toBeUndefined();
  });

  it("cuts a long Lean feedback to rollout.max_feedback_tokens, keeping its start", async () => {
    const { clients, generates } = scripted();
    const lean = create(TheoremSchema, { id: "t", statement: "theorem t : 1 = 1", kind: TaskKind.LEAN_PROOF });
    const verification = create(VerifyResponseSchema, {
      verdict: Verdict.ERROR,
      messages: [{ severity: Severity.ERROR, pos: { line: 2, column: 2 }, data: `unsolved goals\n${"⊢ 1 = 1 ".repeat(100)}` }],
    });
    (clients.reward as { scoreGroup: unknown }).scoreGroup = async (request: ScoreGroupRequest) => ({
      results: request.completions.map(() => create(RewardResultSchema, { reward: 0, solved: false, verification })),
    });
    const ctx = context(clients, { max_turns: 2, max_feedback_tokens: 120 });
    ctx.config.prompt.feedback_template = "{feedback}";
    const group = await repairRolloutGroup(ctx, lean, "g", 1);
    for (const sample of group.samples) expect(sample.completionMask!.filter((m) => !m).length).toBeLessThanOrEqual(120);
    const turn = group.readable!.turns![0]![0]!;
    expect(turn.feedback).toMatch(/^Lean's verdict: ERROR\.\nline 2, column 2: unsolved goals/u);
    expect(turn.feedback!.endsWith("…")).toBe(true);
    expect(generates.length).toBe(5);
  });
});

describe("the checker's feedback", () => {
  it("tells a math answer only that it is not correct, never the answer", () => {
    const result = create(RewardResultSchema, {
      reward: 0,
      solved: false,
      components: [{ scorer: "math_answer", detail: "boxed 41 != 42" }],
    });
    const text = feedbackText(problem, result);
    expect(text).toBe(MATH_FEEDBACK);
    expect(text).not.toContain("42");
  });

  it("quotes Lean's first errors with their line and column, and the goals left", () => {
    const lean = create(TheoremSchema, { id: "t", statement: "theorem t (p : Prop) (hp : p) : p ∧ p", kind: TaskKind.LEAN_PROOF });
    const verification = create(VerifyResponseSchema, {
      verdict: Verdict.ERROR,
      messages: [
        { severity: Severity.WARNING, pos: { line: 1, column: 8 }, data: "unused variable" },
        { severity: Severity.ERROR, pos: { line: 2, column: 2 }, data: "unknown identifier 'h'" },
        ...[3, 4, 5, 6].map((line) => ({ severity: Severity.ERROR, pos: { line, column: 0 }, data: `error ${line}` })),
      ],
      goals: ["p : Prop\nhp : p\n⊢ p ∧ p"],
    });
    const text = feedbackText(lean, create(RewardResultSchema, { verification }));
    expect(text).toBe(
      "Lean's verdict: ERROR.\nline 2, column 2: unknown identifier 'h'\nline 3, column 0: error 3\nline 4, column 0: error 4\nGoals left:\np : Prop\nhp : p\n⊢ p ∧ p",
    );
  });

  it("says which declaration of a whole-file proof an error is in: an auxiliary by name, or the theorem's proof", () => {
    const statement = "theorem add_zero_wf (n : Nat) : n + 0 = n";
    const lean = create(TheoremSchema, { id: "t", statement, context: "open Nat", kind: TaskKind.LEAN_PROOF });
    const checkedSource = `open Nat\ndef two_wf : Nat := 2\n\nlemma aux_wf (n : Nat) :\n    n + 0 = n := by\n  simpx\n\n${statement} := by\n  exact aux_wf n\n  rfl`;
    const verification = create(VerifyResponseSchema, {
      verdict: Verdict.ERROR,
      checkedSource,
      messages: [
        { severity: Severity.ERROR, pos: { line: 6, column: 2 }, data: "unknown tactic" },
        { severity: Severity.ERROR, pos: { line: 10, column: 2 }, data: "no goals" },
      ],
    });
    expect(feedbackText(lean, create(RewardResultSchema, { verification }))).toBe(
      "Lean's verdict: ERROR.\nline 6, column 2 (in the auxiliary `aux_wf`): unknown tactic\nline 10, column 2 (in the theorem's proof): no goals",
    );
  });

  it("quotes a goal once when Lean's unsolved-goals error already shows it", () => {
    const lean = create(TheoremSchema, { id: "t", statement: "theorem t : 1 = 1", kind: TaskKind.LEAN_PROOF });
    const verification = create(VerifyResponseSchema, {
      verdict: Verdict.ERROR,
      messages: [{ severity: Severity.ERROR, pos: { line: 1, column: 20 }, data: "unsolved goals\n⊢ 1 = 1" }],
      goals: ["⊢ 1 = 1"],
    });
    expect(feedbackText(lean, create(RewardResultSchema, { verification }))).toBe(
      "Lean's verdict: ERROR.\nline 1, column 20: unsolved goals\n⊢ 1 = 1",
    );
  });
});

describe("held-out evaluation with repair turns", () => {
  it("records accuracy after the first and the last greedy attempt from one run of each problem", async () => {
    // Problem "a" is right at once, "b" on its second attempt, "c" never.
    const answers: Record<string, string[]> = { a: ["\\boxed{1}"], b: ["\\boxed{0}", "\\boxed{1}"], c: ["\\boxed{0}", "\\boxed{2}"] };
    const generates: GenerateRequest[] = [];
    const clients = {
      inference: {
        async generate(request: GenerateRequest) {
          generates.push(request);
          // eval/<problem> for the first turn, eval/<problem>/t0/turn<k> after.
          const [, index, , turn] = request.requestId.split("/");
          const id = ["a", "b", "c"][Number(index)]!;
          const text = answers[id]![turn ? Number(turn.slice(4)) - 1 : 0]!;
          const tokenIds = [...text].map((c) => c.charCodeAt(0));
          return { promptTokenIds: [1, 2], completions: [create(CompletionSchema, { text, tokenIds, logprobs: tokenIds.map(() => 0) })] };
        },
        async tokenize({ prompt }: { prompt: Prompt }) {
          const text = prompt.kind.case === "text" ? prompt.kind.value : "";
          return { tokenIds: [...text].map((c) => c.charCodeAt(0)), templatedText: text };
        },
      },
      reward: {
        async scoreGroup(request: ScoreGroupRequest) {
          const right = request.completions.map((c) => c.text.includes(`{${request.theorem!.answer}}`));
          return { results: right.map((solved) => create(RewardResultSchema, { reward: solved ? 1 : 0, solved })) };
        },
      },
      withRetry: <T>(_service: string, call: () => Promise<T>) => call(),
    } as unknown as MeshClients;
    const theorems = ["a", "b", "c"].map((id) =>
      create(TheoremSchema, { id, informalStatement: id, answer: "1", kind: TaskKind.MATH_ANSWER }),
    );
    const config = RunConfigSchema.parse({ training: { mode: "whole" }, eval: { data: "x.jsonl", max_turns: 2 } });
    const record = await heldoutAccuracy({ clients, config, theorems, chatPrompts: false }, 10, "policy-v3");
    expect(record).toMatchObject({ step: 10, heldout_accuracy: 1 / 3, solved: 1, problems: 3 });
    expect(record.repair).toEqual({ max_turns: 2, accuracy_turn1: 1 / 3, accuracy_last_turn: 2 / 3, second_attempts: 2, repaired: 1 });
    expect(repairEvalSummary(record)).toBe("; after 2 turns 66.7% (1 of 2 wrong first answers put right)");
    expect(heldoutMetrics(record)).toMatchObject({
      heldout_accuracy: 1 / 3,
      heldout_accuracy_turn1: 1 / 3,
      heldout_accuracy_last_turn: 2 / 3,
      heldout_repair_success_rate: 0.5,
    });
    // Greedy, with the run's adapter, on every turn.
    for (const g of generates) expect([g.sampling!.temperature, g.adapter, g.n]).toEqual([0, "policy-v3", 1]);
    // Without eval.max_turns a whole-mode run evaluates one attempt; a repair run as many as rollout.max_turns.
    expect(evalTurns(RunConfigSchema.parse({}))).toBe(1);
    expect(evalTurns(RunConfigSchema.parse({ training: { mode: "repair" }, rollout: { max_turns: 3 } }))).toBe(3);
  });
});

describe("repair settings", () => {
  it("refuses bad values naming the key and what is accepted", () => {
    const issues = (input: unknown) => {
      const parsed = RunConfigSchema.safeParse(input);
      return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    };
    expect(issues({ rollout: { max_turns: 0 } })).toEqual([expect.stringMatching(/^rollout\.max_turns: .*>=1/)]);
    expect(issues({ rollout: { turn_discount: 1.5 } })).toEqual([expect.stringMatching(/^rollout\.turn_discount: .*<=1/)]);
    expect(issues({ rollout: { turn_discount: 0 } })).toEqual([expect.stringMatching(/^rollout\.turn_discount: .*>0/)]);
    expect(issues({ rollout: { max_turn: 2 } })).toEqual([expect.stringMatching(/^rollout: .*max_turn/)]);
    expect(issues({ training: { mode: "repairs" } })).toEqual([expect.stringMatching(/^training\.mode: .*"whole"\|"tactic"\|"repair"/)]);
  });
});
