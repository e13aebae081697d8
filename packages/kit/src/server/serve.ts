// serve(): one port answering gRPC, gRPC-Web and Connect for a set of services, with
// reflection, health, tracing, limits, optional auth and TLS, and a graceful drain.
//
//   listener (connections/)   accepts under the connection caps and deadlines
//     ├─ HTTP/2   → the kit's HTTP/2 sessions, each stream by its content type:
//     │               gRPC → gRPC engine (grpc/, @grpc/grpc-js)
//     │               Connect, gRPC-Web → web engine (web/, connect-node)
//     └─ HTTP/1.1 → web engine (Connect, gRPC-Web)
//   calls/                    what both engines run for every call: admission (auth on
//                             the headers, budgets, default deadline) and the service
//                             pipeline around each handler (tracing, domain errors)
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import type { Logger } from "pino";
import { HealthRegistry, createHealthService } from "../health/health-service.js";
import { createReflectionServices } from "../reflection/reflection-service.js";
import { shutdownTracing } from "../telemetry/setup-tracing.js";
import type { DomainErrorMapping } from "../errors/domain-error-mapping.js";
import { createLogger } from "../log.js";
import { isLoopbackHost } from "../auth/mesh-token.js";
import { createCallAdmission } from "./calls/call-admission.js";
import { callRoutes } from "./calls/call-routes.js";
import { wrapServiceImpl } from "./calls/service-pipeline.js";
import { ConnectionRegistry } from "./connections/connection-registry.js";
import { listenForConnections } from "./connections/connection-listener.js";
import { defaultConnectionCap } from "./connections/open-file-limit.js";
import { createGrpcEngine } from "./grpc/grpc-engine.js";
import { createHttp2Sessions } from "./connections/http2-sessions.js";
import { createWebEngine } from "./web/web-engine.js";
import { ServerConfigSchema, type ServerConfigInput } from "./server-config.js";
import { requireSafeExposure } from "./exposure.js";

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
  config?: ServerConfigInput;
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
  /** Calls admitted and not yet answered, right now. */
  inFlight(): number;
  /** Connections held right now. */
  connections(): number;
  /** NOT_SERVING, drain delay, stop accepting, wait for in-flight calls up to the grace period, close. */
  shutdown(): Promise<void>;
}

export async function serve(options: ServeOptions): Promise<RunningServer> {
  const config = ServerConfigSchema.parse(options.config ?? {});
  requireSafeExposure(config);
  const { limits } = config;
  const logger = options.logger ?? createLogger(options.name);
  const shutdownController = new AbortController();

  const health = new HealthRegistry(options.services.map((s) => s.service.typeName));
  const healthService = createHealthService(health);
  const infrastructure: ServiceRegistration[] = [
    healthService,
    // Reflection describes everything served, itself included, so grpcurl can call health too.
    ...createReflectionServices([...options.services.map((s) => s.service), healthService.service]),
  ];
  const registrations = [...options.services, ...infrastructure];
  const onUnmapped = (error: unknown, rpc: string) => logger.error({ err: error, rpc }, "handler failed");
  const services = registrations.map(({ service, impl, errors }) => ({
    service,
    impl: wrapServiceImpl(service, impl, { errors, onUnmapped }),
  }));

  const routes = callRoutes(registrations.map((r) => r.service));
  const admission = createCallAdmission({ token: config.auth.token, limits });
  const maxConnections = limits.connections.max ?? defaultConnectionCap();
  const registry = new ConnectionRegistry({
    max: maxConnections,
    perPeer: limits.connections.per_peer ?? Math.ceil(maxConnections / 4),
    handshakeTimeoutMs: limits.connections.handshake_timeout_ms,
    idleTimeoutMs: limits.connections.idle_timeout_ms,
    onIdle: (connection) => sessions.goAway(connection),
  });
  const callHooks = {
    onCallOpened: (connection: string) => registry.callOpened(connection),
    onCallEnded: (connection: string) => registry.callEnded(connection),
  };
  const grpc = createGrpcEngine({ services, routes, admission, limits, ...callHooks });
  const web = createWebEngine({ services, routes, admission, limits, shutdownSignal: shutdownController.signal, ...callHooks });
  const sessions = createHttp2Sessions({
    streamsPerConnection: limits.connections.streams_per_connection,
    grpc: (stream, headers) => grpc.handleStream(stream, headers),
    other: (stream, headers, rawHeaders) => web.handleStream(stream, headers, rawHeaders),
    logger,
  });

  const listener = await listenForConnections({
    host: config.host,
    port: config.port,
    tls: config.tls,
    registry,
    handshakeTimeoutMs: limits.connections.handshake_timeout_ms,
    serve: { http2: (socket) => sessions.accept(socket), http1: (socket) => web.accept(socket) },
    logger,
  });
  const port = listener.port;
  const urlHost = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `${config.tls ? "https" : "http"}://${urlHost}:${port}`;

  const stopReadiness = options.services.map((registration) => watchReadiness(registration, health, logger));

  let shuttingDown: Promise<void> | undefined;
  const shutdown = () => {
    shuttingDown ??= (async () => {
      logger.info({ inFlight: admission.inFlight() }, "draining");
      for (const stop of stopReadiness) stop();
      health.shutdown();
      if (config.shutdown.drain_delay_ms > 0) await sleep(config.shutdown.drain_delay_ms);
      listener.close();
      // GOAWAY: open calls finish, no new ones start on these connections.
      sessions.drain(config.shutdown.grace_period_ms);
      web.drain();
      registry.closeIdle();
      const graceEnds = Date.now() + config.shutdown.grace_period_ms;
      while (admission.inFlight() > 0 && Date.now() < graceEnds) await sleep(10);
      if (admission.inFlight() > 0) logger.warn({ inFlight: admission.inFlight() }, "grace period over; aborting calls");
      // Answered is not yet delivered: a call's last frames are out once its stream
      // closes. A moment for that (streams a client keeps half-open are not waited for).
      const flushEnds = Math.min(graceEnds, Date.now() + FLUSH_MS);
      while (sessions.openStreams() > 0 && Date.now() < flushEnds) await sleep(10);
      const reason = new ConnectError("the server is shutting down", Code.Unavailable);
      shutdownController.abort(reason);
      grpc.abortCalls(reason);
      sessions.close();
      web.close();
      registry.close();
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

  if (config.allow_plaintext && !config.tls && !isLoopbackHost(config.host)) {
    logger.warn(
      { host: config.host },
      "serving without TLS beyond loopback (server.allow_plaintext): the bearer token crosses the network in clear text",
    );
  }
  // Announced last: whoever reacts to this line (a supervisor, a test) may signal at
  // once, and until process.once("SIGTERM") has run the OS default would kill us.
  logger.info({ url, services: options.services.map((s) => s.service.typeName) }, "serving");
  return {
    url,
    host: config.host,
    port,
    health,
    inFlight: () => admission.inFlight(),
    connections: () => registry.size,
    shutdown,
  };
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

/** How long a drained server waits for its answered calls' last frames to leave. */
const FLUSH_MS = 1_000;

function sleep(ms: number) {
  return new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
}
