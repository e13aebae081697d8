// LeanVerifierService: the handler, mountable in-process (embedded mode, tests) or served by src/server.ts.
import { createLogger, type ServiceRegistration } from "@lean-grpo/kit";
import { LeanVerifierService } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import type { Logger } from "./logger.js";
import type { VerifierConfig } from "./config.js";
import { startMetricsServer, type MetricsServer } from "./metrics/metrics-server.js";
import { VerifierMetrics } from "./metrics/verifier-metrics.js";
import { ReplPool } from "./pool/repl-pool.js";
import { findExecutable, resolveReplayCommand, resolveReplCommand } from "./repl/repl-command.js";
import { prepareSandbox, type Sandbox } from "./repl/sandbox.js";
import { ReplayChecker } from "./replay/replay-checker.js";
import { inCompletionOrder } from "./rpc/completion-order.js";
import { verifierErrors } from "./rpc/connect-errors.js";
import { poolStats } from "./rpc/pool-stats.js";
import { applyTactic, startProof } from "./rpc/tactic-mode.js";
import { validateVerifyRequest, verifyProof, type VerifyDependencies } from "./rpc/verify.js";
import { validateItem, verifyBatchItem } from "./rpc/verify-batch-item.js";
import { ScreenThreads } from "./screen/screen-threads.js";
import { ProofSessions } from "./tactic/proof-sessions.js";

export interface VerifierService extends ServiceRegistration<typeof LeanVerifierService> {
  /** The REPL pool; undefined when no REPL is configured (Verify then answers UNAVAILABLE). */
  readonly pool: ReplPool | undefined;
  readonly metrics: VerifierMetrics;
  /** The Prometheus endpoint's URL once it listens; undefined when `metrics.port` is unset. */
  metricsUrl(): Promise<string | undefined>;
  /** Stops the workers and the metrics endpoint. */
  close(): Promise<void>;
}

export interface VerifierServiceOptions {
  /** Where LEAN_REPL_CMD / LEAN_REPL_CWD are read when `repl.command` is empty; process.env by default. */
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
}

export function createVerifierService(config: VerifierConfig, options: VerifierServiceOptions = {}): VerifierService {
  const logger = options.logger ?? createLogger("verifier");
  const repl = resolveReplCommand(config.repl, options.env ?? process.env);
  // Checked before anything starts: with mode bwrap, a host where bubblewrap cannot run stops the service here.
  const sandbox = repl ? prepareSandbox(config.repl.sandbox, logger) : undefined;
  if (sandbox) logger.info({ mode: sandbox.mode, enforced: sandbox.enforced }, "Lean runs in this sandbox");
  const pool = repl
    ? new ReplPool({
        command: repl.argv,
        cwd: repl.cwd,
        env: config.repl.env,
        size: config.repl.pool_size,
        queueCapacity: config.repl.queue_capacity,
        headerTimeoutMs: config.repl.header_timeout_ms,
        headerCacheSize: config.repl.header_cache_size,
        warmHeaders: config.repl.warm_headers,
        memoryLimitBytes: config.repl.memory_limit_mb * 1024 * 1024,
        memorySampleMs: config.repl.memory_sample_ms,
        maxRequestsPerWorker: config.repl.max_requests_per_worker,
        maxResponseChars: config.repl.max_response_bytes,
        sandbox: sandbox!,
        logger,
      })
    : undefined;
  if (!pool) logger.warn("no Lean REPL configured (repl.command / LEAN_REPL_CMD): Verify and tactic mode answer UNAVAILABLE");
  const replay = pool ? replayChecker(config, options.env ?? process.env, sandbox!, logger) : undefined;

  const sessions = new ProofSessions(config.repl.session_idle_ms);
  const sweeper = setInterval(() => sessions.sweep(), Math.min(config.repl.session_idle_ms, 60_000));
  sweeper.unref();
  if (pool) {
    pool.liveSessions = (workerId) => sessions.countOn(workerId);
    pool.addWorkerEndedListener((workerId, kind) => sessions.workerEnded(workerId, kind));
    void pool.start();
  }

  const metrics = new VerifierMetrics({ pool: () => pool?.snapshot(), sessions: () => sessions.size, replay: () => replay?.counts });
  const metricsServer: Promise<MetricsServer | undefined> =
    config.metrics.port === undefined
      ? Promise.resolve(undefined)
      : startMetricsServer(metrics.registry, config.metrics.host, config.metrics.port).then(
          (server) => {
            logger.info({ url: server.url }, "serving Prometheus metrics");
            return server;
          },
          (error: unknown) => {
            logger.error({ err: error, port: config.metrics.port }, "the metrics endpoint could not listen");
            return undefined;
          },
        );

  // Proofs, statements and tactics are screened in threads of their own: a long text holds no event loop (screen-threads.ts).
  const screens = new ScreenThreads();
  const verify: VerifyDependencies = { config: config.repl, pool, metrics, replay, screens };
  const tacticMode = { config: config.repl, pool, sessions, screens };
  return {
    service: LeanVerifierService,
    errors: verifierErrors,
    pool,
    metrics,
    impl: {
      async verify(request, context) {
        return verifyProof(validateVerifyRequest(request, config.repl), context.signal, verify);
      },
      async *verifyBatch(request, context) {
        // As many at once as there are workers: a batch keeps the pool busy without filling the queue.
        const concurrency = pool?.size ?? 1;
        if (request.invalidItemsAsResults) {
          // Each invalid item is its own REJECTED result; the others are checked.
          const items = request.items.map((item, index) => validateItem(item, config.repl, index));
          yield* inCompletionOrder(items, concurrency, (item, index) =>
            verifyBatchItem(item, context.signal, verify).then((result) => ({ index, result })),
          );
          return;
        }
        // Every item is checked before any runs: a bad item fails the call, naming it.
        const items = request.items.map((item, index) => validateVerifyRequest(item, config.repl, `items[${index}].`));
        yield* inCompletionOrder(items, concurrency, (item, index) =>
          verifyProof(item, context.signal, verify).then((result) => ({ index, result })),
        );
      },
      startProof: (request, context) => startProof(request, context, tacticMode),
      applyTactic: (request, context) => applyTactic(request, context, tacticMode),
      endProof(request) {
        sessions.end(request.sessionId);
        return {};
      },
      poolStats: () => poolStats(pool, sessions, metrics, replay),
    },
    metricsUrl: async () => (await metricsServer)?.url,
    async close() {
      clearInterval(sweeper);
      replay?.close();
      await Promise.all([pool?.close(), screens.close(), metricsServer.then((server) => server?.close())]);
    },
  };
}

/**
 * The replay tier for `repl.replay` (proved by default). A REPL without a checker is a
 * configuration error, not a silent downgrade: PROVED would then rest on the REPL
 * alone, which a proof's elaboration-time code can fool. `repl.replay: off` says so
 * explicitly.
 */
function replayChecker(config: VerifierConfig, env: NodeJS.ProcessEnv, sandbox: Sandbox, logger: Logger): ReplayChecker | undefined {
  if (config.repl.replay === "off") {
    logger.warn("repl.replay is off: PROVED rests on the REPL's verdict alone (no kernel replay in a fresh process)");
    return undefined;
  }
  const command = resolveReplayCommand(config.repl, env);
  if (!command) {
    throw new Error(
      `repl.replay is "${config.repl.replay}" but no replay checker is configured: set repl.replay_checker.command ` +
        "(or LEAN_REPLAY_CMD) to leanprover/comparator, e.g. [lake, env, /opt/comparator/.lake/build/bin/comparator], " +
        'or set repl.replay: off to accept the REPL\'s verdict alone (accepted values: "proved", "always", "off")',
    );
  }
  const cwd = command.workspace ?? process.cwd();
  if (!findExecutable(command.argv[0]!, cwd, env.PATH)) {
    throw new Error(`repl.replay_checker.command: ${command.argv[0]} is not an executable (searched PATH and ${cwd})`);
  }
  const checker = config.repl.replay_checker;
  return new ReplayChecker({
    argv: command.argv,
    workspace: command.workspace,
    env: checker.env,
    timeoutMs: checker.timeout_ms,
    concurrency: checker.concurrency,
    permittedAxioms: checker.permitted_axioms,
    sandbox,
    logger,
  });
}
