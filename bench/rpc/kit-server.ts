// The kit's serve() running the benchmark handler with its production defaults
// (tracing provider registered, concurrency limit, health, reflection). Prints its port.
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { serve, serviceRegistration, setupTracing } from "@lean-grpo/kit";
import { tokenize } from "./tokenize-handler.js";

setupTracing({ serviceName: "bench-rpc" });
const server = await serve({
  name: "bench",
  services: [serviceRegistration(InferenceService, { tokenize })],
  config: { shutdown: { drain_delay_ms: 0, grace_period_ms: 1_000 } },
  handleSignals: true,
});
console.log(server.port);
