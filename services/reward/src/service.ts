// RewardService: the handler, mountable in-process (embedded mode, tests) or served by src/server.ts.
import type { ServiceRegistration } from "@lean-grpo/kit";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import type { RewardConfig } from "./config.js";

/**
 * Returns the RewardService registration. Its RPCs land with issue 4; until then
 * every method answers UNIMPLEMENTED (the kit fills in methods left out).
 */
export function createRewardService(_config: RewardConfig): ServiceRegistration<typeof RewardService> {
  return { service: RewardService, impl: {} };
}
