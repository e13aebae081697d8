// One tactic-mode group against scripted clients: trajectories that prove the theorem,
// fail a tactic, run out of steps, are called complete by ApplyTactic but rejected by
// the command-mode re-check, or stop at an empty tactic; what is scored, what the learner
// gets, and that every session is ended.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { CompletionSchema, FinishReason, TaskKind, TheoremSchema, type Completion } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { GenerateRequest } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import type { ScoreGroupRequest } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { TacticStatus, type ApplyTacticRequest } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { replicaUnreachable } from "@lean-grpo/kit";
import { describe, expect, it } from "vitest";
import type { MeshClients } from "../src/run/mesh-clients.js";
import type { RolloutContext } from "../src/run/rollout/rollout.js";
import { RunConfigSchema } from "../src/run/config/run-config.js";
import { tacticPromptText } from "../src/run/rollout/tactic-prompt.js";
import { MAX_SESSION_RESTARTS, tacticRolloutGroup, turnSeed } from "../src/run/rollout/tactic-rollout.js";

const theorem = create(TheoremSchema, {
  id: "and",
  name: "and_swap",
  statement: "theorem and_swap (p r : Prop) (hp : p) (hr : r) : p ∧ r",
  kind: TaskKind.LEAN_PROOF,
});
const PROVED = "by\n  constructor\n  exact hp\n  exact hr";

/** What ApplyTactic answers for each tactic the script uses. */
const TACTICS: Record<string, { status: TacticStatus; goals: string[] } | ConnectError> = {
  constructor: { status: TacticStatus.INCOMPLETE, goals: ["⊢ p", "⊢ r"] },
  "exact hp": { status: TacticStatus.INCOMPLETE, goals: ["⊢ r"] },
  "exact hr": { status: TacticStatus.COMPLETED, goals: [] },
  // Tactic mode has had false positives: ApplyTactic says done, the re-check says no.
  trivial: { status: TacticStatus.COMPLETED, goals: [] },
  skip: { status: TacticStatus.INCOMPLETE, goals: ["⊢ p ∧ r"] },
  exat: { status: TacticStatus.ERROR, goals: [] },
  spin: new ConnectError("the tactic ran past 500 ms; its worker was restarted", Code.DeadlineExceeded),
};

/** Completion text of each turn, per trajectory (trailing text after the line is not part of the tactic). */
const SCRIPT = [
  ["constructor\n", " exact hp", "exact hr\nmore"], // proved
  ["constructor", "exat"], // tactic error
  ["skip", "skip", "skip", "skip"], // max_proof_steps = 3
  ["trivial"], // complete for ApplyTactic, rejected by Verify
  [""], // empty tactic: stops at once, nothing sampled
  ["constructor", "spin"], // a tactic that hangs Lean ends the trajectory
];

interface Recorded {
  generates: GenerateRequest[];
  applied: { request: ApplyTacticRequest; proofState: number | undefined }[];
  ended: string[];
  scored: ScoreGroupRequest[];
}

interface ScriptOptions {
  startProof?: () => never;
  /** A mesh failure to throw instead of answering this ApplyTactic, if any. */
  applyFails?: (request: ApplyTacticRequest) => ConnectError | undefined;
}

function scriptedClients(options: ScriptOptions = {}): { clients: MeshClients; recorded: Recorded } {
  const recorded: Recorded = { generates: [], applied: [], ended: [], scored: [] };
  let sessions = 0;
  let states = 100;
  const tokens = (text: string) => [...text].map((c) => c.charCodeAt(0) % 97);
  const clients = {
    inference: {
      async generate(request: GenerateRequest) {
        recorded.generates.push(request);
        const [, , trajectory, turn] = request.requestId.split("/");
        const text = (SCRIPT[Number(trajectory!.slice(1))]![Number(turn)] ?? "").split("\n")[0]!;
        const completion = create(CompletionSchema, {
          index: 0,
          text,
          tokenIds: tokens(text),
          logprobs: tokens(text).map(() => -0.5),
          finishReason: FinishReason.STOP,
          policyVersion: 3n,
        });
        // Prompt ids differ per turn, as the growing prompt does.
        return { promptTokenIds: [1, Number(trajectory!.slice(1)), Number(turn)], completions: [completion] };
      },
    },
    verifier: {
      async startProof() {
        options.startProof?.();
        return { sessionId: `session-${sessions++}`, proofState: 0, goals: ["⊢ p ∧ r"], messages: [] };
      },
      async applyTactic(request: ApplyTacticRequest) {
        const failure = options.applyFails?.(request);
        if (failure) throw failure;
        const answer = TACTICS[request.tactic];
        if (!answer) throw new Error(`unscripted tactic ${request.tactic}`);
        const proofState = answer instanceof ConnectError || answer.status === TacticStatus.ERROR ? undefined : states++;
        recorded.applied.push({ request, proofState });
        if (answer instanceof ConnectError) throw answer;
        return { status: answer.status, proofState, goals: answer.goals, messages: [] };
      },
      async endProof(request: { sessionId: string }) {
        recorded.ended.push(request.sessionId);
        return {};
      },
    },
    reward: {
      async scoreGroup(request: ScoreGroupRequest) {
        recorded.scored.push(request);
        const results = request.completions.map((c: Completion) => ({
          reward: c.text === PROVED ? 1 : 0,
          solved: c.text === PROVED,
          components: [],
        }));
        return { results, rewardMean: 1 / results.length, rewardStd: 0.4, passRate: 1 / results.length };
      },
    },
    withRetry: <T>(_service: string, call: () => Promise<T>) => call(),
  } as unknown as MeshClients;
  return { clients, recorded };
}

function context(clients: MeshClients): RolloutContext {
  const config = RunConfigSchema.parse({
    training: { mode: "tactic", num_generations: SCRIPT.length, max_proof_steps: 3, max_tokens: 16 },
  });
  return { clients, config, runId: "run", step: 4, adapter: "policy-v3", chatPrompts: false };
}

describe("a tactic-mode group", () => {
  it("runs each trajectory to its end, re-checks the assembled proofs and trains on every turn", async () => {
    const { clients, recorded } = scriptedClients();
    const ctx = context(clients);
    const group = await tacticRolloutGroup(ctx, theorem, "s4-g0", 77);

    // The re-check: the tactics ApplyTactic accepted, under `by`, scored as whole proofs are.
    expect(recorded.scored).toHaveLength(1);
    expect(recorded.scored[0]!.completions.map((c) => c.text)).toEqual([
      PROVED,
      "by\n  constructor",
      "by\n  skip\n  skip\n  skip",
      "by\n  trivial",
      "",
      "by\n  constructor",
    ]);
    expect(recorded.scored[0]!.completions[0]!.tokenIds).toEqual(group.samples.slice(0, 3).flatMap((s) => s.completion.tokenIds));
    expect(group.rewards).toEqual([1, 0, 0, 0, 0, 0]);
    expect(group.solved).toEqual([true, false, false, false, false, false]);
    expect(group.proofSteps).toEqual([3, 2, 3, 1, 0, 2]);
    expect(group.unstarted).toBe(0);

    // One sample per turn that sampled tokens, with that turn's prompt and the trajectory's reward.
    expect(group.samples.map((s) => s.sampleId)).toEqual([
      "s4-g0/0.0",
      "s4-g0/0.1",
      "s4-g0/0.2",
      "s4-g0/1.0",
      "s4-g0/1.1",
      "s4-g0/2.0",
      "s4-g0/2.1",
      "s4-g0/2.2",
      "s4-g0/3.0",
      "s4-g0/5.0",
      "s4-g0/5.1",
    ]);
    expect(group.samples.map((s) => s.reward)).toEqual([1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(group.samples[1]!.promptTokenIds).toEqual([1, 0, 1]);
    expect(group.samples[1]!.completion.text).toBe(" exact hp");

    // Each turn: one completion, cut at the line, seeded by (group seed, trajectory, turn), with the goals fed back.
    expect(recorded.generates.every((g) => g.n === 1 && g.adapter === "policy-v3" && g.sampling!.stop.includes("\n"))).toBe(true);
    const seeds = recorded.generates.map((g) => g.sampling!.seed!);
    expect(new Set(seeds).size).toBe(seeds.length);
    const t0turn2 = recorded.generates.find((g) => g.requestId === "run/s4-g0/t0/2")!;
    expect(t0turn2.sampling!.seed).toBe(BigInt(turnSeed(77, 0, 2)));
    expect(t0turn2.prompt!.kind).toEqual({
      case: "text",
      value: tacticPromptText(theorem, ctx.config.prompt.tactic_template, ["constructor", "exact hp"], ["⊢ r"]),
    });
    expect(t0turn2.prompt!.kind.value).toContain("  constructor\n  exact hp\n```\nCurrent goals:\n⊢ r\nNext tactic:");

    // Each tactic ran on the state the previous one left; every session was ended.
    const bySession = new Map<string, Recorded["applied"]>();
    for (const call of recorded.applied) bySession.set(call.request.sessionId, [...(bySession.get(call.request.sessionId) ?? []), call]);
    expect(bySession.size).toBe(5); // trajectory 4 applied nothing
    for (const calls of bySession.values()) {
      expect(calls[0]!.request.proofState).toBe(0);
      calls.slice(1).forEach((call, i) => expect(call.request.proofState).toBe(calls[i]!.proofState));
    }
    expect([...bySession.values()].map((calls) => calls.map((c) => c.request.tactic))).toContainEqual([
      "constructor",
      "exact hp",
      "exact hr",
    ]);
    expect(recorded.ended.sort()).toEqual(Array.from({ length: 6 }, (_, i) => `session-${i}`).sort());

    // To read: every turn with the very prompt Generate was sent and how its tactic fared.
    const readable = group.readable!;
    const sent = (id: string) => recorded.generates.find((g) => g.requestId === id)!.prompt;
    expect(readable.sampled).toBe(sent("run/s4-g0/t0/0"));
    expect(readable.turns![0]!.map((t) => [t.prompt, t.completion.text, t.tacticStatus])).toEqual([
      [sent("run/s4-g0/t0/0"), "constructor", "INCOMPLETE"],
      [sent("run/s4-g0/t0/1"), " exact hp", "INCOMPLETE"],
      [sent("run/s4-g0/t0/2"), "exact hr", "COMPLETED"],
    ]);
    expect(readable.turns![1]!.map((t) => t.tacticStatus)).toEqual(["INCOMPLETE", "ERROR"]);
    // An empty tactic is not applied; a tactic that hangs Lean has no status either.
    expect(readable.turns![4]!.map((t) => t.tacticStatus)).toEqual([undefined]);
    expect(readable.turns![5]!.map((t) => t.tacticStatus)).toEqual(["INCOMPLETE", undefined]);
  });

  it("scores empty proofs when the verifier cannot open the theorem", async () => {
    const { clients, recorded } = scriptedClients({
      startProof: () => {
        throw new ConnectError("theorem.statement: the statement does not elaborate: unknown identifier", Code.InvalidArgument);
      },
    });
    const group = await tacticRolloutGroup(context(clients), theorem, "s4-g1", 5);
    expect(group.unstarted).toBe(6);
    expect(group.samples).toEqual([]);
    expect(recorded.generates).toEqual([]);
    expect(recorded.scored[0]!.completions.map((c) => c.text)).toEqual(Array(6).fill(""));
  });

  it("lets a lost mesh fail the group instead of ending trajectories", async () => {
    const { clients } = scriptedClients({
      startProof: () => {
        throw new ConnectError("no Lean REPL is configured", Code.Unavailable);
      },
    });
    await expect(tacticRolloutGroup(context(clients), theorem, "s4-g2", 5)).rejects.toThrow(/no Lean REPL/);
  });

  it("starts a trajectory again from StartProof when its session's replica is lost, never scoring that as the model's", async () => {
    const failed = new Set<string>();
    // The first "exact hp" meets a restarted replica; the first "exat" a dead one.
    const { clients, recorded } = scriptedClients({
      applyFails: ({ tactic }) => {
        if (failed.has(tactic)) return undefined;
        failed.add(tactic);
        if (tactic === "exact hp")
          return new ConnectError("tactic session was opened by verifier process aaaa, and this is bbbb", Code.Aborted);
        if (tactic === "exat") return replicaUnreachable("http://10.0.0.7:50051", "connect ECONNREFUSED");
        return undefined;
      },
    });
    const group = await tacticRolloutGroup(context(clients), theorem, "s4-g3", 77);
    // The same outcome as without the failures: trajectory 0 proves, trajectory 1 fails its own tactic.
    expect(group.rewards).toEqual([1, 0, 0, 0, 0, 0]);
    expect(group.proofSteps).toEqual([3, 2, 3, 1, 0, 2]);
    expect(group.sessionRestarts).toBe(2);
    expect(recorded.scored[0]!.completions.map((c) => c.text)[0]).toBe(PROVED);
    // Only the turns of the finished attempts are trained on.
    expect(group.samples.filter((s) => s.sampleId.startsWith("s4-g3/0.")).map((s) => s.sampleId)).toEqual([
      "s4-g3/0.0",
      "s4-g3/0.1",
      "s4-g3/0.2",
    ]);
    expect(group.samples.filter((s) => s.sampleId.startsWith("s4-g3/1.")).map((s) => s.sampleId)).toEqual(["s4-g3/1.0", "s4-g3/1.1"]);
    // 6 sessions and 2 new ones, every one ended (or tried).
    expect(recorded.ended).toHaveLength(8);
  });

  it("fails the step, saying why, when a trajectory keeps losing its replica", async () => {
    const { clients } = scriptedClients({
      applyFails: ({ tactic }) =>
        tactic === "constructor" ? replicaUnreachable("http://10.0.0.7:50051", "connect ECONNREFUSED") : undefined,
    });
    await expect(tacticRolloutGroup(context(clients), theorem, "s4-g4", 5)).rejects.toThrow(
      new RegExp(
        `lost its verifier session ${MAX_SESSION_RESTARTS + 1} times .*http://10\\.0\\.0\\.7:50051.*the verifier replicas keep failing`,
      ),
    );
  });
});
