// A gRPC health probe for container health checks (Docker HEALTHCHECK, compose, and
// Kubernetes exec probes where the service speaks TLS, which the native grpc probe cannot):
// exits 0 when the server says SERVING, 1 otherwise, 2 on a usage error.
//
//   health-probe ADDRESS [SERVICE] [--ca FILE] [--server-name NAME]
//
// ADDRESS is HOST:PORT or http://HOST:PORT (plain text), or https://HOST:PORT (TLS). Over TLS
// the certificate is checked against FILE's authorities (default: Node's, plus
// NODE_EXTRA_CA_CERTS) and for NAME (default: HOST), so a probe can dial 127.0.0.1 inside a
// pod and still check the name the certificate is issued for.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";

const USAGE = "usage: health-probe HOST:PORT|http(s)://HOST:PORT [SERVICE] [--ca FILE] [--server-name NAME]\n";

function usage(problem: string): never {
  process.stderr.write(`health-probe: ${problem}\n${USAGE}`);
  process.exit(2);
}

let parsed: ReturnType<typeof parseProbeArgs>;
try {
  parsed = parseProbeArgs(process.argv.slice(2));
} catch (error) {
  usage((error as Error).message);
}
const { baseUrl, service, tls } = parsed;
try {
  const res = await createClient(Health, createGrpcTransport({ baseUrl, nodeOptions: tls })).check({ service }, { timeoutMs: 3_000 });
  const status = HealthCheckResponse_ServingStatus[res.status];
  process.stdout.write(`${status}\n`);
  process.exit(res.status === HealthCheckResponse_ServingStatus.SERVING ? 0 : 1);
} catch (error) {
  process.stderr.write(`health check of ${baseUrl} failed: ${(error as Error).message}\n`);
  process.exit(1);
}

function parseProbeArgs(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    options: { ca: { type: "string" }, "server-name": { type: "string" } },
    allowPositionals: true,
  });
  const [address, service = "", ...extra] = positionals;
  if (!address) throw new Error("no address given");
  if (extra.length > 0) throw new Error(`unexpected arguments: ${extra.join(" ")}`);
  const baseUrl = address.includes("://") ? address : `http://${address}`;
  if (!/^https?:\/\//.test(baseUrl)) throw new Error(`address "${address}" must be HOST:PORT, http://HOST:PORT or https://HOST:PORT`);
  const secure = baseUrl.startsWith("https://");
  const ca = values.ca;
  const servername = values["server-name"];
  if (!secure && (ca !== undefined || servername !== undefined)) {
    throw new Error(`--ca and --server-name apply to TLS: give the address as https://${address.replace(/^\w+:\/\//, "")}`);
  }
  let tls: { ca?: Buffer; servername?: string } | undefined;
  if (secure) {
    tls = {};
    if (ca !== undefined) {
      try {
        tls.ca = readFileSync(ca);
      } catch (error) {
        throw new Error(`cannot read --ca ${ca} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
      }
    }
    if (servername !== undefined) tls.servername = servername;
  }
  return { baseUrl, service, tls };
}
