// Runs the learner service as its own process: `tsx services/learner/src/server.ts [--config FILE] [--port N] [key=value ...]`.
import { runService } from "@lean-grpo/kit";
import { LearnerConfigSchema } from "./config.js";
import { createLearnerService } from "./service.js";

await runService({
  name: "learner",
  schema: LearnerConfigSchema,
  create: (config) => [createLearnerService(config)],
});
