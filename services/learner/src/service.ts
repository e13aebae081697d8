// LearnerService: the handler, mountable in-process (embedded mode, tests) or served by src/server.ts.
import type { ServiceRegistration } from "@lean-grpo/kit";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import type { LearnerConfig } from "./config.js";

/**
 * Returns the LearnerService registration. Its RPCs land with issue 5 and 6; until then
 * every method answers UNIMPLEMENTED (the kit fills in methods left out).
 */
export function createLearnerService(_config: LearnerConfig): ServiceRegistration<typeof LearnerService> {
  return { service: LearnerService, impl: {} };
}
