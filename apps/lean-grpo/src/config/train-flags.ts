// The flags of `lean-grpo train` that set a config key (the seeds' flags among them), in one
// place: the command reads them (train-command.ts) and the config reference lists each beside
// its key, so `lean-grpo config max_samples` answers as `lean-grpo config dataset.max_train_samples`.
import type { NameSource } from "./seed-names.js";

export interface KeyFlag {
  /** The commander option it is read from. */
  option: "algorithm" | "algoConfig" | "numGenerations" | "steps" | "lr" | "model_path" | "output_dir" | "max_samples";
  /** As typed, with its short form where it has one. */
  flag: string;
  /** Our dotted key it sets. */
  key: string;
  /** Its other spelling (-a is --algorithm, -n --num-generations). */
  also?: string;
  /** Who writes this flag, when it is a seed's. */
  seeds?: readonly NameSource[];
}

export const KEY_FLAGS: readonly KeyFlag[] = [
  { option: "algorithm", flag: "--algorithm", also: "-a", key: "algorithm.name", seeds: ["001"] },
  { option: "algoConfig", flag: "--algo-config", key: "algorithm.config", seeds: ["001"] },
  { option: "numGenerations", flag: "-n", also: "--num-generations", key: "training.num_generations", seeds: ["001"] },
  { option: "steps", flag: "--steps", key: "training.steps" },
  { option: "lr", flag: "--lr", key: "services.learner.optimizer.learning_rate", seeds: ["002"] },
  { option: "model_path", flag: "--model_path", key: "model.dir", seeds: ["004"] },
  { option: "output_dir", flag: "--output_dir", key: "runs_dir", seeds: ["004"] },
  { option: "max_samples", flag: "--max_samples", key: "dataset.max_train_samples", seeds: ["004"] },
];
