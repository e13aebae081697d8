// LeanVerifierService: the handler, mountable in-process (embedded mode, tests) or served by src/server.ts.
import type { ServiceRegistration } from "@lean-grpo/kit";
import { LeanVerifierService } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import type { VerifierConfig } from "./config.js";

/**
 * Returns the LeanVerifierService registration. Its RPCs land with issue 3; until then
 * every method answers UNIMPLEMENTED (the kit fills in methods left out).
 */
export function createVerifierService(_config: VerifierConfig): ServiceRegistration<typeof LeanVerifierService> {
  return { service: LeanVerifierService, impl: {} };
}
