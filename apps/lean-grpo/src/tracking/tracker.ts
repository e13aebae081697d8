// What a tracker receives of a run: its start (id, name, resolved config), each step's
// metrics, timings and kept completions, each held-out evaluation, and its end.
import type { EvalRecord } from "@lean-grpo/orchestrator";

export interface TrackedRun {
  runId: string;
  /** runs/<id>/: trackers that write files put them under it. */
  runDir: string;
  name: string;
  /** The resolved config, flattened to dotted keys. */
  config: Record<string, unknown>;
}

export interface TrackedSample {
  theoremId: string;
  prompt: string;
  completion: string;
  reward: number;
  solved: boolean;
}

export interface TrackedStep {
  step: number;
  metrics: Record<string, number>;
  timings: Record<string, number>;
  samples: TrackedSample[];
}

export interface Tracker {
  readonly label: string;
  start(run: TrackedRun): Promise<void>;
  step(step: TrackedStep): Promise<void>;
  evaluation(record: EvalRecord): Promise<void>;
  /** `failed`: the run ended FAILED. Flushes what is left. */
  finish(failed: boolean): Promise<void>;
}

/** Markdown of a step's kept completions (TensorBoard's text plugin renders it; W&B shows the text). */
export function samplesMarkdown(samples: readonly TrackedSample[]): string {
  const fence = (text: string) => `\`\`\`\n${text.replaceAll("```", "ˋˋˋ")}\n\`\`\``;
  return samples
    .map((s) => `**${s.theoremId}** reward ${s.reward}${s.solved ? " (solved)" : ""}\n\n${fence(s.prompt)}\n\n${fence(s.completion)}`)
    .join("\n\n---\n\n");
}
