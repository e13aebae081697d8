// Runs the orchestrator service as its own process: `tsx services/orchestrator/src/server.ts [--config FILE] [--port N] [key=value ...]`.
import { runService } from "@lean-grpo/kit";
import { OrchestratorConfigSchema } from "./config.js";
import { createOrchestratorService } from "./service.js";

await runService({
  name: "orchestrator",
  schema: OrchestratorConfigSchema,
  create: (config) => [createOrchestratorService(config)],
});
