// The five services behind the kit's serve() with its production defaults (tracing provider
// registered, call admission, limits, health, reflection). Usage: kit-services-server.ts SETUP-JSON;
// prints its port once serving.
import { serve, setupTracing } from "@lean-grpo/kit";
import { serviceStandIns, type StandInSetup } from "./service-stand-ins.js";

const setup = JSON.parse(process.argv[2]!) as StandInSetup;
setupTracing({ serviceName: "bench-rpc-services" });
const server = await serve({
  name: "bench",
  services: serviceStandIns(setup),
  config: { shutdown: { drain_delay_ms: 0, grace_period_ms: 1_000 } },
  handleSignals: true,
});
console.log(server.port);
