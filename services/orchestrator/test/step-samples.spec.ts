// The completions a step keeps to read: spread over groups (best, then worst), bounded in
// count and size, with the verifier's verdict and messages and each scorer's part.
import { create } from "@bufbuild/protobuf";
import { CompletionSchema, FinishReason, PromptSchema, type Prompt } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { RewardResultSchema } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { Severity, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { describe, expect, it } from "vitest";
import { pickSamples, SAMPLE_TEXT_MAX_CHARS, sampleToProto, keptSamples, type ReadableGroup } from "../src/run/training/step-samples.js";

function group(id: string, rewards: number[], text = (i: number) => `proof ${i}`): ReadableGroup {
  return {
    groupId: id,
    theoremId: `thm-${id}`,
    prompt: `prove ${id}`,
    completions: rewards.map((_, i) =>
      create(CompletionSchema, { index: i, text: text(i), tokenIds: [1, 2, 3], finishReason: FinishReason.STOP }),
    ),
    results: rewards.map((reward) =>
      create(RewardResultSchema, {
        reward,
        solved: reward === 1,
        components: [{ scorer: "lean_proof", value: reward, weight: 1, weighted: reward, detail: reward === 1 ? "proved" : "" }],
        verification: {
          verdict: reward === 1 ? Verdict.PROVED : Verdict.ERROR,
          reason: reward === 1 ? "" : "unsolved goals",
          messages: reward === 1 ? [] : [{ severity: Severity.ERROR, pos: { line: 3, column: 2 }, data: "unsolved goals\n⊢ False" }],
        },
      }),
    ),
  };
}

describe("pickSamples", () => {
  it("takes the best of each group, then the worst of each, up to the count", () => {
    const picked = pickSamples([group("a", [0, 1, 0.5]), group("b", [0.2, 0, 1])], 3);
    expect(picked.map((s) => [s.group_id, s.reward])).toEqual([
      ["a", 1],
      ["b", 1],
      ["a", 0],
    ]);
  });

  it("stops when every completion is taken, and takes none for 0", () => {
    expect(pickSamples([group("a", [1, 0])], 10)).toHaveLength(2);
    expect(pickSamples([group("a", [1, 0])], 0)).toEqual([]);
  });

  it("keeps the verdict, the reason and Lean's messages, and each scorer's weighted part", () => {
    const [proved, failed] = pickSamples([group("a", [0, 1])], 2);
    expect(proved).toMatchObject({
      verdict: "PROVED",
      solved: true,
      reward_components: { lean_proof: 1 },
      messages: ["lean_proof: proved"],
      completion_tokens: 3,
      finish_reason: "STOP",
      truncated: false,
    });
    expect(failed!.verdict).toBe("ERROR");
    expect(failed!.messages).toEqual(["unsolved goals", "3:2 error: unsolved goals\n⊢ False"]);
  });

  it("cuts long completions to the bound and says so", () => {
    const [long] = pickSamples([group("a", [1], () => "x".repeat(SAMPLE_TEXT_MAX_CHARS + 500))], 1);
    expect(long!.completion.length).toBe(SAMPLE_TEXT_MAX_CHARS + 1);
    expect(long!.truncated).toBe(true);
    expect(sampleToProto(long!).truncated).toBe(true);
  });
});

describe("keptSamples", () => {
  it("records each kept sample's prompt as the sampler rendered it, once per group, cut to the bound, leaving groups without one as they are", async () => {
    const chat = (content: string) =>
      create(PromptSchema, {
        kind: {
          case: "chat",
          value: {
            messages: [
              { role: "system", content: "S" },
              { role: "user", content },
            ],
          },
        },
      });
    const groups = [
      { ...group("a", [1, 0]), sampled: chat("prove a") },
      { ...group("b", [1, 0]), sampled: chat("x".repeat(SAMPLE_TEXT_MAX_CHARS)) },
      group("c", [1]),
    ];
    const rendered: string[] = [];
    const render = async (prompt: Prompt) => {
      const messages = prompt.kind.case === "chat" ? prompt.kind.value.messages : [];
      rendered.push(messages.at(-1)!.content.slice(0, 10));
      return messages.map((m) => `<${m.role}>${m.content}`).join("") + "<assistant>";
    };
    const kept = await keptSamples(groups, 5, render);
    expect(kept.map((s) => [s.group_id, s.prompt.slice(0, 40), s.truncated])).toEqual([
      ["a", "<system>S<user>prove a<assistant>", false],
      ["b", `<system>S<user>${"x".repeat(25)}`, true],
      ["c", "prove c", false],
      ["a", "<system>S<user>prove a<assistant>", false],
      ["b", `<system>S<user>${"x".repeat(25)}`, true],
    ]);
    expect(kept.find((s) => s.group_id === "b")!.prompt).toHaveLength(SAMPLE_TEXT_MAX_CHARS + 1);
    expect(rendered).toEqual(["prove a", "xxxxxxxxxx"]);
  });

  it("records a tactic trajectory's turns, each with the prompt it was sampled from as rendered, its tactic's status and the trajectory's reward", async () => {
    const goals = (state: string) => create(PromptSchema, { kind: { case: "text", value: `goals: ${state}` } });
    const [first, second] = [goals("⊢ 1 + 1 = 2"), goals("⊢ 2 = 2")];
    const turn = (text: string, prompt: Prompt, tacticStatus?: string) => ({
      completion: create(CompletionSchema, { text, tokenIds: [7, 8] }),
      prompt,
      ...(tacticStatus ? { tacticStatus } : {}),
    });
    const tactic: ReadableGroup = {
      ...group("t", [1, 0]),
      sampled: first,
      turns: [[turn("norm_num\n", first, "INCOMPLETE"), turn("rfl\n", second, "COMPLETED")], [turn("\n", first)]],
    };
    const rendered: Prompt[] = [];
    const kept = await keptSamples([tactic], 2, async (prompt) => {
      rendered.push(prompt);
      return `<rendered>${prompt.kind.value}`;
    });
    expect(kept[0]!.prompt).toBe("<rendered>goals: ⊢ 1 + 1 = 2");
    expect(kept[0]!.turns).toEqual([
      {
        completion: "norm_num\n",
        reward: 1,
        solved: true,
        verdict: "INCOMPLETE",
        completion_tokens: 2,
        prompt: "<rendered>goals: ⊢ 1 + 1 = 2",
      },
      { completion: "rfl\n", reward: 1, solved: true, verdict: "COMPLETED", completion_tokens: 2, prompt: "<rendered>goals: ⊢ 2 = 2" },
    ]);
    expect(kept[1]!.turns).toEqual([
      { completion: "\n", reward: 0, solved: false, verdict: "", completion_tokens: 2, prompt: "<rendered>goals: ⊢ 1 + 1 = 2" },
    ]);
    // Each distinct prompt is rendered once however many turns and samples share it.
    expect(rendered).toEqual([first, second]);
    expect(sampleToProto(kept[0]!).turns.map((t) => [t.prompt, t.verdict])).toEqual([
      ["<rendered>goals: ⊢ 1 + 1 = 2", "INCOMPLETE"],
      ["<rendered>goals: ⊢ 2 = 2", "COMPLETED"],
    ]);
  });
});
