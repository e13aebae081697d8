// serve(): one HTTP/2 port answering gRPC, gRPC-Web and Connect for a set of
// services, with reflection, health, tracing, limits, optional auth and a
// graceful drain. Every call passes the request gate (auth on headers, a slot
// under the concurrency cap, a deadline) and is then served by connect-node.
import * as http2 from "node:http2";
import { readFileSync } from "node:fs";
import { setMaxListeners } from "node:events";
import type { AddressInfo } from "node:net";
import type { DescService } from "@bufbuild/protobuf";
import type { Interceptor, ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import type { Logger } from "pino";
import { HealthRegistry, createHealthService } from "../health/health-service.js";
import { createReflectionServices } from "../reflection/reflection-service.js";
import { rpcServerTracing, UNTRACED_SERVICES } from "../telemetry/rpc-tracing.js";
import { shutdownTracing } from "../telemetry/setup-tracing.js";
import { createConcurrencyLimit } from "../limits/concurrency-limit.js";
import { bearerAuth } from "../auth/bearer-auth.js";
import { domainErrorInterceptor } from "../errors/domain-error-interceptor.js";
import type { DomainErrorMapping } from "../errors/domain-error-mapping.js";
import { createRequestGate, type CallRoute } from "./request-gate.js";
import { GrpcMessageResponse } from "./grpc-message-encoding.js";
import { ServerConfigSchema, type ServerConfig } from "./server-config.js";
import { createLogger } from "../log.js";

/** A service and its implementation; missing methods answer UNIMPLEMENTED. */
// biome-ignore lint/suspicious/noExplicitAny: a list of registrations mixes services; each is checked where it is built
export interface ServiceRegistration<T extends DescService = any> {
  service: T;
  impl: Partial<ServiceImpl<T>>;
  /**
   * How the service's own errors answer (domain error → code), applied around every
   * handler. Errors it does not know answer INTERNAL with their message and are logged.
   */
  errors?: DomainErrorMapping;
  /**
   * A dependency the service cannot work without (a model server, say): polled, and
   * the service's health is NOT_SERVING while it answers false.
   */
  readiness?: { check(signal: AbortSignal): Promise<boolean>; intervalMs: number };
  /** Releases what the service owns (worker processes, ports); called once the drain is over. */
  close?(): Promise<void> | void;
}

/** Pairs a service with its implementation, keeping the handlers' request types inferred. */
export function serviceRegistration<T extends DescService>(
  service: T,
  impl: Partial<ServiceImpl<T>>,
  options: Omit<ServiceRegistration<T>, "service" | "impl"> = {},
): ServiceRegistration<T> {
  return { service, impl, ...options };
}

export interface ServeOptions {
  /** Name for logs ("verifier", "learner", ...). */
  name: string;
  services: ServiceRegistration[];
  /** The `server` config section; defaults fill what is missing. */
  config?: Partial<ServerConfig>;
  /** Extra interceptors, run inside tracing, auth and limits, outside the services' error mappings. */
  interceptors?: Interceptor[];
  /** Install SIGTERM/SIGINT handlers that drain and exit (the process's single owner of shutdown). */
  handleSignals?: boolean;
  logger?: Logger;
}

export interface RunningServer {
  /** Base URL clients use, e.g. "http://127.0.0.1:50051". */
  url: string;
  host: string;
  port: number;
  health: HealthRegistry;
  /** HTTP/2 streams (calls) open right now. */
  inFlight(): number;
  /** NOT_SERVING, drain delay, stop accepting, wait for in-flight calls up to the grace period, close. */
  shutdown(): Promise<void>;
}

/** Services that stay open without a token and are not limited or traced. */
const INFRASTRUCTURE_SERVICES = UNTRACED_SERVICES;

export async function serve(options: ServeOptions): Promise<RunningServer> {
  const config = ServerConfigSchema.parse(options.config ?? {});
  const logger = options.logger ?? createLogger(options.name);
  const shutdownController = new AbortController();
  // Every call in flight links its own signal to this one.
  setMaxListeners(0, shutdownController.signal);

  const health = new HealthRegistry(options.services.map((s) => s.service.typeName));
  const healthService = createHealthService(health);
  const infrastructure: ServiceRegistration[] = [
    healthService,
    // Reflection describes everything served, itself included, so grpcurl can call health too.
    ...createReflectionServices([...options.services.map((s) => s.service), healthService.service]),
  ];
  const registrations = [...options.services, ...infrastructure];

  const auth = config.auth.token ? bearerAuth({ token: config.auth.token, openServices: INFRASTRUCTURE_SERVICES }) : undefined;
  const interceptors: Interceptor[] = [
    rpcServerTracing(),
    // Decided again here, after the gate, so that a call reaching a handler is always authenticated.
    ...(auth ? [auth] : []),
    ...(options.interceptors ?? []),
    // Innermost, so that tracing and every other interceptor see the mapped status.
    ...domainErrorMapping(options.services, logger),
  ];

  const connectHandler = connectNodeAdapter({
    routes(router) {
      for (const { service, impl } of registrations) router.service(service, impl as ServiceImpl<DescService>);
    },
    interceptors,
    readMaxBytes: config.limits.read_max_bytes,
    writeMaxBytes: config.limits.write_max_bytes,
    maxTimeoutMs: config.limits.max_timeout_ms,
    shutdownSignal: shutdownController.signal,
  });
  const admit = createRequestGate({
    routes: callRoutes(registrations),
    limit: createConcurrencyLimit({ maxConcurrentCalls: config.limits.max_concurrent_calls }),
    authenticate: auth && authenticateWith(auth),
    defaultTimeoutMs: config.limits.default_timeout_ms ?? config.limits.max_timeout_ms,
    defaultStreamTimeoutMs: config.limits.default_stream_timeout_ms ?? 0,
    maxTimeoutMs: config.limits.max_timeout_ms,
  });

  const server = config.tls
    ? http2.createSecureServer({ cert: readFileSync(config.tls.cert_file), key: readFileSync(config.tls.key_file) })
    : http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  let openStreams = 0;
  let streamsDrained: (() => void) | undefined;

  server.on("session", (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  const onStream = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, _flags: number, rawHeaders: string[]) => {
    openStreams++;
    // "close", not the answer's end: the drain must not destroy a session whose last
    // trailers are still on their way.
    stream.once("close", () => {
      openStreams--;
      if (openStreams === 0) streamsDrained?.();
    });
    stream.on("error", (error) => logger.debug({ err: error }, "stream error"));
    void admit(stream, headers).then((admitted) => {
      if (!admitted) return;
      // Handed to connect-node through Node's own compat objects, exactly as
      // http2.createServer(handler) would.
      connectHandler(new http2.Http2ServerRequest(stream, headers, undefined as never, rawHeaders), new GrpcMessageResponse(stream));
    });
  };
  server.on("stream", onStream);

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `${config.tls ? "https" : "http"}://${urlHost}:${port}`;

  const stopReadiness = options.services.map((registration) => watchReadiness(registration, health, logger));

  let shuttingDown: Promise<void> | undefined;
  const shutdown = () => {
    shuttingDown ??= (async () => {
      logger.info({ inFlight: openStreams }, "draining");
      for (const stop of stopReadiness) stop();
      health.shutdown();
      if (config.shutdown.drain_delay_ms > 0) await sleep(config.shutdown.drain_delay_ms);
      server.close();
      // GOAWAY: open calls finish, no new ones start on these connections.
      for (const session of sessions) session.close();
      if (openStreams > 0) {
        await Promise.race([new Promise<void>((resolve) => (streamsDrained = resolve)), sleep(config.shutdown.grace_period_ms)]);
      }
      if (openStreams > 0) logger.warn({ inFlight: openStreams }, "grace period over; aborting calls");
      shutdownController.abort();
      for (const session of sessions) session.destroy();
      await Promise.all(
        options.services.map(async (registration) => {
          try {
            await registration.close?.();
          } catch (error) {
            logger.error({ err: error, service: registration.service.typeName }, "close failed");
          }
        }),
      );
      logger.info("stopped");
    })();
    return shuttingDown;
  };

  if (options.handleSignals) {
    const onSignal = (signal: NodeJS.Signals) => {
      logger.info({ signal }, "signal received");
      // Drained, then the last calls' spans delivered, then gone.
      void shutdown()
        .then(() => shutdownTracing())
        .catch((error: unknown) => logger.warn({ err: error }, "while stopping"))
        .finally(() => process.exit(0));
    };
    process.once("SIGTERM", onSignal);
    process.once("SIGINT", onSignal);
  }

  // Announced last: whoever reacts to this line (a supervisor, a test) may signal at
  // once, and until process.once("SIGTERM") has run the OS default would kill us.
  logger.info({ url, services: options.services.map((s) => s.service.typeName) }, "serving");
  return { url, host: config.host, port, health, inFlight: () => openStreams, shutdown };
}

/** Polls a registration's readiness check into its health status; returns the stop. */
function watchReadiness(registration: ServiceRegistration, health: HealthRegistry, logger: Logger): () => void {
  const readiness = registration.readiness;
  if (!readiness) return () => {};
  const name = registration.service.typeName;
  const controller = new AbortController();
  let last: boolean | undefined;
  const poll = async () => {
    const ok = await readiness.check(controller.signal).catch(() => false);
    if (controller.signal.aborted) return;
    if (ok !== last) logger[ok ? "info" : "warn"]({ service: name }, ok ? "dependency ready" : "dependency not ready: NOT_SERVING");
    last = ok;
    health.set(name, ok ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING);
  };
  void poll();
  const timer = setInterval(poll, readiness.intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    controller.abort();
  };
}

function domainErrorMapping(services: ServiceRegistration[], logger: Logger): Interceptor[] {
  // Every service gets one, declared or not: an error no mapping knows answers INTERNAL
  // and is logged, whatever the protocol.
  const mappings = new Map<string, DomainErrorMapping>();
  for (const { service, errors } of services) mappings.set(service.typeName, errors ?? []);
  return [
    domainErrorInterceptor({
      mappings,
      onUnmapped: (error, request) =>
        logger.error({ err: error, rpc: `${request.service.typeName}/${request.method.name}` }, "handler failed"),
    }),
  ];
}

/** Every method served, by HTTP path, for the request gate. */
function callRoutes(registrations: ServiceRegistration[]): Map<string, CallRoute> {
  const routes = new Map<string, CallRoute>();
  for (const { service } of registrations) {
    for (const method of service.methods) {
      routes.set(`/${service.typeName}/${method.name}`, { service: service.typeName, streaming: method.methodKind !== "unary" });
    }
  }
  return routes;
}

/** The auth interceptor's own decision, asked of the headers alone (before any body is read). */
function authenticateWith(auth: Interceptor) {
  const check = auth(async () => undefined as never);
  return async (service: string, header: Headers) => {
    await check({ service: { typeName: service }, header } as never);
  };
}

function sleep(ms: number) {
  return new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
}
