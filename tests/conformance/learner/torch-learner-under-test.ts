// The PyTorch learner (services/learner-torch) under test: spawned the way the mesh spawns it
// (`python -m leangrpo_learner serve`, optionally under torch.distributed.run) with the
// learner config resolved by the TS learner's schema, so both see the same keys and defaults.
import { splitLearnerSection, startTorchLearner } from "@lean-grpo/cli";
import { deepMerge, loadConfig } from "@lean-grpo/kit";
import { LearnerConfigSchema } from "@lean-grpo/learner";
import type { LearnerConfigSection, LearnerUnderTest } from "./learner-under-test.js";
import { PYTHON } from "./python-torch.js";

export function torchLearner(ranks = 1): LearnerUnderTest {
  return {
    name: ranks > 1 ? `torch (torchrun, ${ranks} ranks)` : "torch",
    async start(section: LearnerConfigSection) {
      const config = loadConfig(LearnerConfigSchema, {
        flags: deepMerge({ server: { host: "127.0.0.1", port: 0, shutdown: { drain_delay_ms: 0 } } }, section),
      });
      const { torch } = splitLearnerSection("learner", {
        impl: "torch",
        python: PYTHON,
        ...(ranks > 1 ? { torchrun: { nproc_per_node: ranks } } : {}),
      });
      const learner = await startTorchLearner(config, torch!);
      return { url: learner.url, stop: () => learner.shutdown() };
    },
  };
}
