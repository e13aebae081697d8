// Runs the inference service as its own process: `tsx services/inference/src/server.ts [--config FILE] [--port N] [key=value ...]`.
import { runService } from "@lean-grpo/kit";
import { InferenceConfigSchema } from "./config.js";
import { createInferenceService } from "./service.js";

await runService({
  name: "inference",
  schema: InferenceConfigSchema,
  create: (config) => [createInferenceService(config)],
});
