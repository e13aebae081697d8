// A gRPC health probe for container health checks (Docker HEALTHCHECK, compose):
// exits 0 when the server says SERVING, 1 otherwise. Kubernetes uses its native
// grpc probe instead. Usage: health-probe.ts HOST:PORT [SERVICE]
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";

const [address, service = ""] = process.argv.slice(2);
if (!address) {
  process.stderr.write("usage: health-probe HOST:PORT [SERVICE]\n");
  process.exit(2);
}
const baseUrl = address.includes("://") ? address : `http://${address}`;
try {
  const res = await createClient(Health, createGrpcTransport({ baseUrl })).check({ service }, { timeoutMs: 3_000 });
  const status = HealthCheckResponse_ServingStatus[res.status];
  process.stdout.write(`${status}\n`);
  process.exit(res.status === HealthCheckResponse_ServingStatus.SERVING ? 0 : 1);
} catch (error) {
  process.stderr.write(`health check of ${baseUrl} failed: ${(error as Error).message}\n`);
  process.exit(1);
}
