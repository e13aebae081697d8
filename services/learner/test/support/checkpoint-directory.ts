// A checkpoint directory as the RPCs hand it to the learner: opened under a root (here a test's
// temporary directory) by kit/paths, and closed once `use` is done with it.
import { PathRoot, type RootDirectory } from "@lean-grpo/kit";

export function inCheckpointDirectory<T>(
  root: string,
  name: string,
  use: (directory: RootDirectory) => Promise<T>,
  create = false,
): Promise<T> {
  return new PathRoot({ dir: root, key: "checkpoint_dir" }).withDirectory(name, "path", { create }, use);
}
