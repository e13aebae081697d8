// RewardService over gRPC on loopback: Score, ScoreGroup and ListScorers, and
// every error path a caller can provoke.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { completion, leanAnswer, leanTheorem, mathProblem, proved, verification } from "./messages.js";
import { failure } from "./support/failure.js";
import { startRewardServer, type RewardServer } from "./support/server.js";

describe("RewardService", () => {
  let reward: RewardServer;
  beforeAll(async () => {
    reward = await startRewardServer(["max_group_size=16"]);
  });
  afterAll(async () => {
    await reward.stop();
  });

  describe("Score", () => {
    it("scores a math answer with the configured reward (binary) and reports each component", async () => {
      const { result } = await reward.client.score({ theorem: mathProblem("\\frac{3}{4}"), completion: completion("so \\boxed{0.75}") });
      expect(result).toMatchObject({ reward: 1, solved: true });
      expect(result!.components.map((c) => [c.scorer, c.value, c.weight, c.weighted])).toEqual([["math_answer", 1, 1, 1]]);
      expect(result!.components[0]!.detail).toBe("boxed 0.75 == \\frac{3}{4}");
    });

    it("scores a Lean proof with the verification passed in, and returns that verification", async () => {
      const v = verification(Verdict.INCOMPLETE, { total: 3, valid: 3, goals: 2, errors: 1 });
      const { result } = await reward.client.score({
        theorem: leanTheorem(),
        completion: completion(leanAnswer("by\n  constructor")),
        verification: v,
        spec: { preset: "shaped" },
      });
      expect(result!.solved).toBe(false);
      expect(result!.verification?.verdict).toBe(Verdict.INCOMPLETE);
      const byScorer = Object.fromEntries(result!.components.map((c) => [c.scorer, c]));
      expect(Object.keys(byScorer)).toEqual(["lean_proof", "format", "length"]);
      expect(byScorer.lean_proof!.value).toBeCloseTo(0.15, 12);
      expect(byScorer.format!.weighted).toBeCloseTo(0.1, 12);
      expect(result!.reward).toBeCloseTo(0.15 + 0.1 + 0, 12);
    });

    it("infers the task kind when it is unset: Lean with a statement, math without", async () => {
      const lean = await reward.client.score({
        theorem: leanTheorem({ kind: TaskKind.UNSPECIFIED }),
        completion: completion("by simp"),
        verification: proved(),
      });
      expect(lean.result!.components.map((c) => c.scorer)).toEqual(["lean_proof"]);
      const math = await reward.client.score({
        theorem: mathProblem("4", { kind: TaskKind.UNSPECIFIED }),
        completion: completion("\\boxed{4}"),
      });
      expect(math.result!.components.map((c) => c.scorer)).toEqual(["math_answer"]);
    });

    it("applies the request's scorers over its preset", async () => {
      const { result } = await reward.client.score({
        theorem: mathProblem("4"),
        completion: completion(`\\boxed{4}${"y".repeat(81)}`),
        spec: { preset: "binary", scorers: [{ name: "length", weight: 2, params: { max_tokens: 100, cache_tokens: 20 } }] },
      });
      // math_answer 1, length (80 - 90) / 20 = -0.5 at weight 2.
      expect(result!.reward).toBeCloseTo(0, 12);
      expect(result!.components.find((c) => c.scorer === "length")).toMatchObject({ value: -0.5, weight: 2, weighted: -1 });
    });
  });

  describe("ScoreGroup", () => {
    it("scores the group and summarises it as the reference does", async () => {
      // Binary rewards [1,0,0,1,0,0,0,0]: fixtures/group-stats.json holds Python's mean and stdev for it.
      const [reference] = JSON.parse(readFileSync(new URL("./fixtures/group-stats.json", import.meta.url), "utf8")) as {
        rewards: number[];
        mean: number;
        std: number;
        pass_rate: number;
      }[];
      const answers = reference!.rewards.map((r, i) => completion(r === 1 ? "\\boxed{12}" : `\\boxed{${i + 20}}`));
      const response = await reward.client.scoreGroup({ theorem: mathProblem("12"), completions: answers, groupId: "g1" });
      expect(response.results.map((r) => r.reward)).toEqual(reference!.rewards);
      expect(response.rewardMean).toBeCloseTo(reference!.mean, 12);
      expect(response.rewardStd).toBeCloseTo(reference!.std, 12);
      expect(response.passRate).toBe(reference!.pass_rate);
    });

    it("lets group-level scorers see the whole group", async () => {
      const response = await reward.client.scoreGroup({
        theorem: leanTheorem(),
        completions: [completion("by simp"), completion("by ring"), completion("by omega"), completion("by decide")],
        verifications: [
          proved(1),
          verification(Verdict.ERROR, { errors: 1 }),
          verification(Verdict.ERROR, { errors: 1 }),
          verification(Verdict.ERROR, { errors: 1 }),
        ],
        spec: { preset: "binary", scorers: [{ name: "difficulty", weight: 1, params: { source: "pass_rate" } }] },
      });
      expect(response.results.map((r) => r.reward)).toEqual([1.75, 0, 0, 0]);
      expect(response.passRate).toBe(0.25);
    });
  });

  describe("ListScorers", () => {
    it("describes every scorer with its parameters, the presets and the active reward", async () => {
      const list = await reward.client.listScorers({});
      expect(list.scorers.map((s) => s.name)).toEqual([
        "lean_proof",
        "math_answer",
        "format",
        "length",
        "efficiency",
        "difficulty",
        "domain",
      ]);
      const length = list.scorers.find((s) => s.name === "length")!;
      expect(length.params.map((p) => [p.name, p.type, p.defaultValue])).toEqual([
        ["max_tokens", "integer", "4096"],
        ["cache_tokens", "integer", "1024"],
        ["truncated", "number", "-1"],
        ["unit", "enum", '"tokens"'],
      ]);
      expect(length.params[3]!.allowedValues).toEqual(["tokens", "characters"]);
      expect(list.scorers.find((s) => s.name === "difficulty")!.groupLevel).toBe(true);
      for (const scorer of list.scorers) {
        expect(scorer.description.length).toBeGreaterThan(40);
        for (const param of scorer.params) expect(param.description).toMatch(/Accepts /);
      }
      expect(list.presets.map((p) => p.name)).toEqual(["binary", "shaped", "lenient", "strict"]);
      const shaped = list.presets.find((p) => p.name === "shaped")!;
      expect(shaped.description).toContain("Lean: proved [0.5, 1.1], not proved [-0.5, 0.4]");
      expect(shaped.scorers.find((s) => s.name === "lean_proof")).toMatchObject({
        weight: 1,
        params: { mode: "shaped", max_partial: 0.3 },
      });
      expect(list.active?.name).toBe("binary");
    });
  });

  describe("bad input", () => {
    const math = { theorem: mathProblem("4"), completion: completion("\\boxed{4}") };
    it.each([
      [
        "an unknown scorer",
        { ...math, spec: { scorers: [{ name: "brevity", weight: 1 }] } },
        'spec.scorers[0].name: unknown scorer "brevity"; accepted: lean_proof, math_answer, format',
      ],
      [
        "a negative weight",
        { ...math, spec: { scorers: [{ name: "format", weight: -1 }] } },
        "spec.scorers[0].weight: -1 is not accepted; expected a finite number >= 0",
      ],
      [
        "an infinite weight",
        { ...math, spec: { scorers: [{ name: "format", weight: Number.POSITIVE_INFINITY }] } },
        "spec.scorers[0].weight: Infinity is not accepted",
      ],
      [
        "an unknown preset",
        { ...math, spec: { preset: "gentle" } },
        'spec.preset: unknown preset "gentle"; accepted: binary, shaped, lenient, strict',
      ],
      [
        "an unknown parameter",
        { ...math, spec: { scorers: [{ name: "format", weight: 1, params: { think: true } }] } },
        'spec.scorers[0].params: unknown parameter "think" for scorer format; accepted: require_think',
      ],
      [
        "a bad parameter value",
        { ...math, spec: { scorers: [{ name: "math_answer", weight: 1, params: { tolerance: "tight" } }] } },
        'spec.scorers[0].params.tolerance: "tight" is not accepted; expected a number in [0, 0.1]',
      ],
      [
        "a missing ground truth",
        { theorem: mathProblem(""), completion: completion("\\boxed{4}") },
        "theorem.answer is empty: a math task needs its ground-truth answer",
      ],
      ["a missing theorem", { completion: completion("\\boxed{4}") }, "theorem is required"],
      ["a missing completion", { theorem: mathProblem("4") }, "completion is required"],
      ["a verification for a math task", { ...math, verification: proved() }, "verification: verifications are for Lean tasks"],
      [
        "an unset verdict",
        { theorem: leanTheorem(), completion: completion("by simp"), verification: verification(Verdict.UNSPECIFIED) },
        "verification.verdict is VERDICT_UNSPECIFIED",
      ],
      [
        "a group-level scorer in Score",
        { ...math, spec: { scorers: [{ name: "difficulty", weight: 1, params: { source: "pass_rate" } }] } },
        'scorer difficulty with source "pass_rate" needs the whole group: call ScoreGroup',
      ],
      [
        "a length scorer without token ids",
        { theorem: mathProblem("4"), completion: completion("\\boxed{4}", { tokenIds: [] }), spec: { preset: "shaped" } },
        "completion.token_ids is empty but the length scorer counts tokens",
      ],
    ])("answers INVALID_ARGUMENT for %s, naming the field", async (_, request, message) => {
      const error = await failure(reward.client.score(request as Parameters<typeof reward.client.score>[0]));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toContain(message);
    });

    it("answers INVALID_ARGUMENT for a group with mismatched verifications or no completions", async () => {
      const mismatched = await failure(
        reward.client.scoreGroup({
          theorem: leanTheorem(),
          completions: [completion("by simp"), completion("by ring")],
          verifications: [proved()],
        }),
      );
      expect(mismatched.code).toBe(Code.InvalidArgument);
      expect(mismatched.rawMessage).toBe(
        "verifications has 1 entries for 2 completions: send none, or one per completion in the same order",
      );
      const empty = await failure(reward.client.scoreGroup({ theorem: mathProblem("4"), completions: [] }));
      expect(empty.code).toBe(Code.InvalidArgument);
    });

    it("answers RESOURCE_EXHAUSTED for a group over max_group_size", async () => {
      const error = await failure(
        reward.client.scoreGroup({ theorem: mathProblem("4"), completions: Array.from({ length: 17 }, () => completion("\\boxed{4}")) }),
      );
      expect(error.code).toBe(Code.ResourceExhausted);
      expect(error.rawMessage).toBe("completions has 17 entries; at most 16 per group (config key max_group_size)");
    });

    it("answers FAILED_PRECONDITION, naming verifier.url, for a Lean proof to verify without a verifier", async () => {
      const error = await failure(reward.client.score({ theorem: leanTheorem(), completion: completion(leanAnswer("by simp")) }));
      expect(error.code).toBe(Code.FailedPrecondition);
      expect(error.rawMessage).toContain("no verifier is configured (config key verifier.url)");
    });
  });
});

describe("RewardService with an unreachable verifier", () => {
  let reward: RewardServer;
  let closedPort: number;
  beforeAll(async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe: Server = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    closedPort = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    reward = await startRewardServer([`verifier.url=http://127.0.0.1:${closedPort}`]);
  });
  afterAll(async () => {
    await reward.stop();
  });

  it("answers UNAVAILABLE, naming the verifier and the completion", async () => {
    const error = await failure(
      reward.client.score({ theorem: leanTheorem(), completion: completion(leanAnswer("by simp")) }, { timeoutMs: 10_000 }),
    );
    expect(error.code).toBe(Code.Unavailable);
    expect(error.rawMessage).toContain(`verifier (http://127.0.0.1:${closedPort}) failed on completion`);
  });

  it("does not call it when every verification is passed in, or there is no proof", async () => {
    const response = await reward.client.scoreGroup({
      theorem: leanTheorem(),
      completions: [completion("by simp"), completion("")],
      verifications: [proved(), verification(Verdict.ERROR)],
    });
    expect(response.results.map((r) => r.reward)).toEqual([1, 0]);
    const noProof = await reward.client.score({ theorem: leanTheorem(), completion: completion("<think>hmm") });
    expect(noProof.result!.reward).toBe(0);
  });
});
