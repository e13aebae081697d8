// The TypeScript learner (services/learner) under test: mounted in-process through its public
// createLearnerService and the kit's serve(), on a loopback port.
import { deepMerge, loadConfig, serve } from "@lean-grpo/kit";
import { createLearnerService, LearnerConfigSchema } from "@lean-grpo/learner";
import type { LearnerConfigSection, LearnerUnderTest } from "./learner-under-test.js";

export const tsLearner: LearnerUnderTest = {
  name: "ts",
  async start(section: LearnerConfigSection) {
    const flags = deepMerge({ backend: "cpu", server: { port: 0, shutdown: { drain_delay_ms: 0 } } }, section);
    const config = loadConfig(LearnerConfigSchema, { flags });
    const server = await serve({ name: "learner", services: [createLearnerService(config)], config: config.server });
    return { url: server.url, stop: () => server.shutdown() };
  },
};
