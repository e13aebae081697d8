// format: 1 when the completion has the structure the prompt asked for (a
// thinking block before the answer; a boxed answer or a Lean code block), 0
// otherwise. It checks structure only: no keyword anywhere earns anything.
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { blankNonCode } from "../lean/lean-source.js";
import { extractLastBoxed } from "../math/extract-boxed.js";
import { booleanParam } from "../reward/params.js";
import { defineScorer, type ScoredTask } from "../reward/scorer.js";

const LEAN_BLOCK = /```lean4?[ \t]*\n([\s\S]*?)```/g;

export const formatScorer = defineScorer({
  name: "format",
  description:
    "Both tasks. 1 when every required part is present, else 0 (the detail names what is missing). Thinking: one " +
    "non-empty <think>...</think> block opens the completion and something follows it. Answer, after the thinking: a " +
    "non-empty \\boxed{} for math tasks; a closed ```lean code block with code in it (comments do not count) for Lean tasks.",
  tasks: [TaskKind.LEAN_PROOF, TaskKind.MATH_ANSWER],
  groupLevel: false,
  params: {
    require_think: booleanParam({ default: true, description: "Require the <think>...</think> block before the answer." }),
    think_opened_by_prompt: booleanParam({
      default: false,
      description: "The chat template already opened <think> in the prompt (Qwen3, DeepSeek-R1): expect only </think> in the completion.",
    }),
    require_answer: booleanParam({
      default: true,
      description: "Require the answer part (\\boxed{} or a Lean code block) after the thinking.",
    }),
  },
  check: (p) =>
    p.require_think || p.require_answer ? undefined : "require_think and require_answer are both false: format would pay for anything",
  bounds: () => ({ solved: [0, 1], unsolved: [0, 1] }),
  score(evidence, p) {
    const text = evidence.completion.text;
    const problems: string[] = [];
    const thinking = splitThinking(text, p.think_opened_by_prompt);
    if (p.require_think && thinking.problem) problems.push(thinking.problem);
    if (p.require_answer) {
      const answerProblem = missingAnswer(thinking.answer, evidence.task);
      if (answerProblem) problems.push(answerProblem);
    }
    return problems.length === 0 ? { value: 1, detail: "required structure present" } : { value: 0, detail: problems.join("; ") };
  },
});

function count(text: string, tag: string): number {
  return text.split(tag).length - 1;
}

/** The answer part (after the thinking) and what is wrong with the thinking, if anything. */
function splitThinking(text: string, openedByPrompt: boolean): { answer: string; problem?: string } {
  const close = text.indexOf("</think>");
  const answer = close < 0 ? text : text.slice(close + "</think>".length);
  const opens = count(text, "<think>");
  const closes = count(text, "</think>");
  const expectedOpens = openedByPrompt ? 0 : 1;
  if (opens !== expectedOpens || closes !== 1) {
    const wanted = openedByPrompt ? "exactly one </think> and no <think>" : "exactly one <think> and one </think>";
    return { answer, problem: `thinking: wanted ${wanted}, found ${opens} and ${closes}` };
  }
  if (!openedByPrompt && !text.trimStart().startsWith("<think>")) return { answer, problem: "thinking: text before <think>" };
  const thought = text.slice(openedByPrompt ? 0 : text.indexOf("<think>") + "<think>".length, close);
  if (thought.trim() === "") return { answer, problem: "thinking: empty" };
  if (answer.trim() === "") return { answer, problem: "nothing after </think>" };
  return { answer };
}

function missingAnswer(answer: string, task: ScoredTask): string | undefined {
  if (task === TaskKind.MATH_ANSWER) {
    const boxed = extractLastBoxed(answer);
    return boxed.kind === "found" && boxed.content.trim() !== "" ? undefined : "answer: no non-empty \\boxed{}";
  }
  const hasCode = [...answer.matchAll(LEAN_BLOCK)].some((block) => blankNonCode(block[1]!).trim() !== "");
  return hasCode ? undefined : "answer: no ```lean code block with code";
}
