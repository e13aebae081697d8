// What the conformance suite needs of a learner implementation: start one with a config
// (the TS learner's keys, services/learner/src/config.ts; both implementations read them)
// and get a plain-gRPC URL, and stop it again.

/** A learner config section, e.g. { model: { dir }, lora: { rank: 4 }, optimizer: {...} }. */
export type LearnerConfigSection = Record<string, unknown>;

export interface RunningLearner {
  /** http://host:port, served over gRPC (HTTP/2 without TLS). */
  url: string;
  stop(): Promise<void>;
}

export interface LearnerUnderTest {
  /** Shown in test names, e.g. "ts" or "torch". */
  name: string;
  /** Starts a learner on a loopback port with this config. */
  start(config: LearnerConfigSection): Promise<RunningLearner>;
}
