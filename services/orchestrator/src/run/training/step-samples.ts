// The completions a step keeps for people to read (report.samples_per_step): prompt,
// completion, reward and its components, verdict and Lean's messages. They go to
// runs/<id>/samples.jsonl and ride on the WatchRun step event, so texts are cut to a
// bound: a sample line stays a few KiB however long the completions are.
import { create } from "@bufbuild/protobuf";
import { FinishReason, type Completion, type Prompt } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { CompletionSampleSchema, type CompletionSample } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import type { RewardResult } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { Severity, Verdict, type VerifyResponse } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import type { ProofFormatName } from "@lean-grpo/kit";

/** Longest prompt or completion text kept, in characters. */
export const SAMPLE_TEXT_MAX_CHARS = 4_000;
/** Most verifier messages kept per sample, and the longest one. */
export const SAMPLE_MESSAGES_MAX = 8;
export const SAMPLE_MESSAGE_MAX_CHARS = 500;

/** What a rollout keeps of its group for reading: the prompt and each completion with its score. */
export interface ReadableGroup {
  groupId: string;
  theoremId: string;
  /** The user turn's text (prompt.*_template filled in). */
  prompt: string;
  /** The prompt as sent to Generate: what the kept samples record, rendered as the sampler rendered it (keptSamples). */
  sampled?: Prompt;
  completions: readonly Completion[];
  results: readonly RewardResult[];
  /** Repair mode: each completion's trajectory, attempt by attempt (the completion is its last attempt). */
  turns?: readonly (readonly ReadableTurn[])[];
  /** A Lean task's proof format (Theorem.proof_format): how its completions were read. */
  proofFormat?: ProofFormatName;
}

/** One attempt of a repair trajectory and the feedback that followed it, or one turn of a tactic trajectory. */
export interface ReadableTurn {
  completion: Completion;
  /** Repair mode: the attempt scored on its own. Tactic mode: absent (every turn trains with the trajectory's reward). */
  result?: RewardResult;
  /** The checker's message, as {feedback} in prompt.feedback_template. */
  feedback?: string;
  /** The whole environment turn as tokenised (template and chat markers included). */
  feedbackText?: string;
  /** Tactic mode: the prompt the turn was sampled from, as sent to Generate (rendered for the kept samples). */
  prompt?: Prompt;
  /** Tactic mode: ApplyTactic's status name; absent when the tactic was not applied. */
  tacticStatus?: string;
}

/** One attempt in samples.jsonl. */
export interface SampleTurnRecord {
  completion: string;
  reward: number;
  solved: boolean;
  verdict: string;
  /** The environment turn the model read next (chat markers included); absent after the last attempt. */
  feedback?: string;
  completion_tokens: number;
  /** Tactic mode: the prompt the turn was sampled from, as the sampler was given it. */
  prompt?: string;
}

/** One line's worth of a sample, as samples.jsonl stores it (snake_case, like the other run files). */
export interface SampleRecord {
  group_id: string;
  theorem_id: string;
  prompt: string;
  completion: string;
  reward: number;
  reward_components: Record<string, number>;
  solved: boolean;
  verdict: string;
  messages: string[];
  completion_tokens: number;
  finish_reason: string;
  truncated: boolean;
  /** Repair mode: the trajectory's attempts, each with the feedback that followed it. */
  turns?: SampleTurnRecord[];
  /** Reasoning vocabulary: [start, end) code-point spans of `completion` written by reasoning tokens. */
  reasoning_spans?: [number, number][];
  /** A Lean task's proof format: `body`, `whole_file` (the completion is a whole Lean file) or `auto`. */
  proof_format?: ProofFormatName;
}

/**
 * Up to `count` completions of the step, spread over its groups: the best of each group
 * first, then the worst of each, then the next best... so a handful shows both what the
 * policy gets right and what it gets wrong. Deterministic, so a resumed run keeps the same ones.
 */
export function pickSamples(groups: readonly ReadableGroup[], count: number): SampleRecord[] {
  return pickCompletions(groups, count).map(({ group, index }) => sampleRecord(group, index));
}

function pickCompletions(groups: readonly ReadableGroup[], count: number): { group: ReadableGroup; index: number }[] {
  const queues = groups.map((group) => {
    const byReward = group.completions.map((_, i) => i).sort((a, b) => (group.results[b]?.reward ?? 0) - (group.results[a]?.reward ?? 0));
    return { group, byReward };
  });
  const picked: { group: ReadableGroup; index: number }[] = [];
  for (let round = 0; picked.length < count; round++) {
    let tookAny = false;
    for (const queue of queues) {
      if (picked.length >= count || queue.byReward.length === 0) continue;
      picked.push({ group: queue.group, index: round % 2 === 0 ? queue.byReward.shift()! : queue.byReward.pop()! });
      tookAny = true;
    }
    if (!tookAny) break;
  }
  return picked;
}

/**
 * The samples a step keeps (pickSamples), each prompt as the text the sampler was given
 * (system turn and chat template included) in place of the user turn alone, and in tactic
 * mode each turn's prompt too: `render` is called once per distinct prompt kept.
 */
export async function keptSamples(
  groups: readonly ReadableGroup[],
  count: number,
  render: (prompt: Prompt) => Promise<string>,
): Promise<SampleRecord[]> {
  const texts = new Map<Prompt, Promise<{ text: string; cut: boolean }>>();
  const rendered = (prompt: Prompt) => {
    if (!texts.has(prompt))
      texts.set(
        prompt,
        render(prompt).then((text) => cut(text, SAMPLE_TEXT_MAX_CHARS)),
      );
    return texts.get(prompt)!;
  };
  return Promise.all(
    pickCompletions(groups, count).map(async ({ group, index }) => {
      const record = sampleRecord(group, index);
      const prompt = group.sampled ? await rendered(group.sampled) : undefined;
      const turnPrompts = await Promise.all((group.turns?.[index] ?? []).map((turn) => (turn.prompt ? rendered(turn.prompt) : undefined)));
      const turns = record.turns?.map((turn, n) => (turnPrompts[n] ? { ...turn, prompt: turnPrompts[n].text } : turn));
      return {
        ...record,
        ...(prompt ? { prompt: prompt.text } : {}),
        ...(turns ? { turns } : {}),
        truncated: record.truncated || (prompt?.cut ?? false) || turnPrompts.some((t) => t?.cut),
      };
    }),
  );
}

function sampleRecord(group: ReadableGroup, index: number): SampleRecord {
  const completion = group.completions[index]!;
  const result = group.results[index];
  const prompt = cut(group.prompt, SAMPLE_TEXT_MAX_CHARS);
  const text = cut(completion.text, SAMPLE_TEXT_MAX_CHARS);
  const allMessages = [
    ...verifierMessages(result?.verification),
    ...(result?.components ?? []).filter((c) => c.detail).map((c) => `${c.scorer}: ${c.detail}`),
  ];
  const messages = allMessages.slice(0, SAMPLE_MESSAGES_MAX).map((m) => cut(m, SAMPLE_MESSAGE_MAX_CHARS));
  const turns = group.turns?.[index]?.map((turn) => turnRecord(turn, result));
  return {
    group_id: group.groupId,
    theorem_id: group.theoremId,
    prompt: prompt.text,
    completion: text.text,
    reward: result?.reward ?? 0,
    reward_components: Object.fromEntries((result?.components ?? []).map((c) => [c.scorer, c.weighted])),
    solved: result?.solved ?? false,
    verdict: result?.verification && result.verification.verdict !== Verdict.UNSPECIFIED ? Verdict[result.verification.verdict] : "",
    messages: messages.map((m) => m.text),
    completion_tokens: completion.tokenIds.length,
    finish_reason: FinishReason[completion.finishReason] ?? "UNSPECIFIED",
    truncated:
      prompt.cut ||
      text.cut ||
      messages.some((m) => m.cut) ||
      allMessages.length > SAMPLE_MESSAGES_MAX ||
      (turns?.some((t) => t.cut) ?? false),
    ...(turns ? { turns: turns.map((t) => t.record) } : {}),
    ...(completion.reasoning ? { reasoning_spans: keptSpans(completion.reasoning.spans, text.text) } : {}),
    ...(group.proofFormat ? { proof_format: group.proofFormat } : {}),
  };
}

/** The spans that lie in the kept (possibly cut) text. */
function keptSpans(spans: readonly { start: number; end: number }[], kept: string): [number, number][] {
  const length = Array.from(kept).length;
  return spans.filter((s) => s.start < length).map((s) => [s.start, Math.min(s.end, length)]);
}

/** A turn as samples.jsonl keeps it; a tactic turn (no result of its own) carries its trajectory's reward. */
function turnRecord(turn: ReadableTurn, trajectory: RewardResult | undefined): { record: SampleTurnRecord; cut: boolean } {
  const text = cut(turn.completion.text, SAMPLE_TEXT_MAX_CHARS);
  const feedback = turn.feedbackText === undefined ? undefined : cut(turn.feedbackText, SAMPLE_TEXT_MAX_CHARS);
  const result = turn.result ?? trajectory;
  const verification = turn.result?.verification;
  return {
    record: {
      completion: text.text,
      reward: result?.reward ?? 0,
      solved: result?.solved ?? false,
      verdict: turn.tacticStatus ?? (verification && verification.verdict !== Verdict.UNSPECIFIED ? Verdict[verification.verdict] : ""),
      ...(feedback ? { feedback: feedback.text } : {}),
      completion_tokens: turn.completion.tokenIds.length,
    },
    cut: text.cut || (feedback?.cut ?? false),
  };
}

/** The verifier's reason first, then Lean's messages as "line:col severity: text". */
function verifierMessages(verification: VerifyResponse | undefined): string[] {
  if (!verification) return [];
  const lines = verification.reason ? [verification.reason] : [];
  for (const m of verification.messages) {
    const where = m.pos ? `${m.pos.line}:${m.pos.column} ` : "";
    lines.push(`${where}${Severity[m.severity]?.toLowerCase() ?? "message"}: ${m.data}`);
  }
  return lines;
}

function cut(text: string, max: number): { text: string; cut: boolean } {
  return text.length <= max ? { text, cut: false } : { text: `${text.slice(0, max)}…`, cut: true };
}

export function sampleToProto(record: SampleRecord): CompletionSample {
  return create(CompletionSampleSchema, {
    groupId: record.group_id,
    theoremId: record.theorem_id,
    prompt: record.prompt,
    completion: record.completion,
    reward: record.reward,
    rewardComponents: record.reward_components,
    solved: record.solved,
    verdict: record.verdict,
    messages: record.messages,
    completionTokens: record.completion_tokens,
    finishReason: record.finish_reason,
    truncated: record.truncated,
    reasoningSpans: (record.reasoning_spans ?? []).map(([start, end]) => ({ start, end })),
    turns: (record.turns ?? []).map((t) => ({
      completion: t.completion,
      reward: t.reward,
      solved: t.solved,
      verdict: t.verdict,
      feedback: t.feedback ?? "",
      completionTokens: t.completion_tokens,
      prompt: t.prompt ?? "",
    })),
  });
}
