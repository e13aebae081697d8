// Runs the verifier service as its own process: `tsx services/verifier/src/server.ts [--config FILE] [--port N] [key=value ...]`.
import { runService } from "@lean-grpo/kit";
import { VerifierConfigSchema } from "./config.js";
import { createVerifierService } from "./service.js";

await runService({
  name: "verifier",
  schema: VerifierConfigSchema,
  create: (config) => [createVerifierService(config)],
});
