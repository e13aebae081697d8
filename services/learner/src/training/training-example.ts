// One rollout sample as the learner trains on it: the exact ids the sampler saw and produced.
export interface TrainingExample {
  /** Caller's id, or "#<index>" when it gave none; used in error messages. */
  sampleId: string;
  groupId: string;
  promptIds: number[];
  completionIds: number[];
  /** Sampler logprob of each completion token; null when unknown. */
  samplerLogprobs: number[] | null;
  reward: number;
  /** Cut by max_tokens. */
  truncated: boolean;
  /**
   * Per completion token, true where the model wrote it (trained on), false where the environment
   * did (conditioning only; model-tokens.ts). Absent, null or empty: every token is the model's.
   */
  completionMask?: readonly boolean[] | null;
}
