// InferenceService: the handler, mountable in-process (embedded mode, tests) or served by src/server.ts.
import type { ServiceRegistration } from "@lean-grpo/kit";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import type { InferenceConfig } from "./config.js";

/**
 * Returns the InferenceService registration. Its RPCs land with issue 7; until then
 * every method answers UNIMPLEMENTED (the kit fills in methods left out).
 */
export function createInferenceService(_config: InferenceConfig): ServiceRegistration<typeof InferenceService> {
  return { service: InferenceService, impl: {} };
}
