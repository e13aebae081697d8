// OrchestratorService: the handler, mountable in-process (embedded mode, tests) or served by src/server.ts.
import type { ServiceRegistration } from "@lean-grpo/kit";
import { OrchestratorService } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import type { OrchestratorConfig } from "./config.js";

/**
 * Returns the OrchestratorService registration. Its RPCs land with issue 8; until then
 * every method answers UNIMPLEMENTED (the kit fills in methods left out).
 */
export function createOrchestratorService(_config: OrchestratorConfig): ServiceRegistration<typeof OrchestratorService> {
  return { service: OrchestratorService, impl: {} };
}
