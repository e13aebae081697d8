// Serves the reward service for real on loopback, with the kit's gRPC client.
import type { Client } from "@connectrpc/connect";
import { createServiceClient, loadConfig, serve, type RunningServer } from "@lean-grpo/kit";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { RewardConfigSchema } from "../../src/config.js";
import { createRewardService } from "../../src/service.js";

export interface RewardServer {
  client: Client<typeof RewardService>;
  server: RunningServer;
  stop(): Promise<void>;
}

/** `overrides` are dotted config overrides, as on the command line. */
export async function startRewardServer(overrides: string[] = []): Promise<RewardServer> {
  const config = loadConfig(RewardConfigSchema, {
    overrides: ["server.port=0", "server.shutdown.drain_delay_ms=0", "server.shutdown.grace_period_ms=500", ...overrides],
  });
  const registration = createRewardService(config);
  const server = await serve({ name: "reward-test", services: [registration], config: config.server });
  const { client, transport } = createServiceClient(RewardService, { endpoints: [server.url], retry: { maxAttempts: 1 } });
  return {
    client,
    server,
    async stop() {
      transport.close();
      // serve() closes the registration (its verifier client) after the drain.
      await server.shutdown();
    },
  };
}
