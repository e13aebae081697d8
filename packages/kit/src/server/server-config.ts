// The `server` section every service's config shares (YAML keys are snake_case).
import { z } from "zod";

const ConnectionLimitsSchema = z
  .object({
    /**
     * Connections this server holds at once; 0 = no cap. At the cap a new connection
     * takes the place of the one idle longest (no call open), and is refused only when
     * every connection has a call open. Unset: 1024, or an eighth of the process's
     * open-file limit where that is lower.
     */
    max: z.number().int().min(0).optional(),
    /** Connections from one peer address at once, with the same rule; 0 = no cap. Unset: a quarter of `max`. */
    per_peer: z.number().int().min(0).optional(),
    /** Calls open at once on one HTTP/2 connection (SETTINGS_MAX_CONCURRENT_STREAMS). */
    streams_per_connection: z.number().int().positive().default(100),
    /**
     * From accepting a connection to knowing its protocol (the TLS handshake, the HTTP/2
     * preface or an HTTP/1.1 request line) and, for HTTP/1.1, a request's whole header, ms.
     */
    handshake_timeout_ms: z.number().int().positive().default(10_000),
    /** A connection with no call open this long is closed (HTTP/2: GOAWAY), ms; 0 = never. */
    idle_timeout_ms: z.number().int().min(0).default(60_000),
  })
  .strict();

const OpenServiceLimitsSchema = z
  .object({
    /** Health and reflection calls open at once on one connection. */
    calls_per_connection: z.number().int().positive().default(4),
    /** Health.Watch streams open at once, over all connections. */
    max_watches: z.number().int().positive().default(64),
    /** Reflection streams open at once, over all connections. */
    max_reflection_streams: z.number().int().positive().default(16),
    /** Deadline of a health check or reflection stream that sends none, ms (a Watch has none). */
    timeout_ms: z.number().int().positive().default(10_000),
  })
  .strict();

export const ServerConfigSchema = z
  .object({
    /** Address to bind; loopback unless a deployment asks for more. */
    host: z.string().min(1).default("127.0.0.1"),
    /** Port; 0 picks a free one. */
    port: z.number().int().min(0).max(65535).default(0),
    /**
     * Serve TLS instead of plain text. Beyond loopback a service needs it, or
     * `allow_plaintext: true` where the network is encrypted by other means.
     */
    tls: z
      .object({
        /** The certificate chain (PEM). */
        cert_file: z.string().min(1),
        /** The certificate's private key (PEM). */
        key_file: z.string().min(1),
      })
      .strict()
      .optional(),
    /**
     * Bind beyond loopback without TLS: only where the network already encrypts (a
     * service mesh's mTLS, a VPN, a private container network), since the bearer token
     * would otherwise cross it in clear text. Logged as a warning at start.
     */
    allow_plaintext: z.boolean().default(false),
    limits: z
      .object({
        /** Largest request message accepted, bytes. */
        read_max_bytes: z
          .number()
          .int()
          .positive()
          .default(4 * 1024 * 1024),
        /** Largest response message sent, bytes. */
        write_max_bytes: z
          .number()
          .int()
          .positive()
          .default(16 * 1024 * 1024),
        /**
         * Calls in flight per service before RESOURCE_EXHAUSTED; 0 = unlimited. A call
         * counts from its headers until it is answered (a call whose body is still
         * arriving, a WatchRun, a streaming upload all hold a slot). Health and reflection
         * have budgets of their own (`open_services`).
         */
        max_concurrent_calls: z.number().int().min(0).default(256),
        /** Longest deadline a client may ask for, ms. */
        max_timeout_ms: z.number().int().positive().default(600_000),
        /**
         * Deadline of a unary call that sends none (no grpc-timeout / connect-timeout-ms),
         * ms; 0 = none. Unset: max_timeout_ms, the longest a client could ask for.
         */
        default_timeout_ms: z.number().int().min(0).optional(),
        /**
         * Deadline of a streaming call that sends none, ms; 0 = none (the default: a
         * WatchRun follows a run for as long as it lasts; streams still count against
         * max_concurrent_calls).
         */
        default_stream_timeout_ms: z.number().int().min(0).optional(),
        /** What connections may hold: caps, the handshake deadline, the idle timeout. */
        connections: ConnectionLimitsSchema.prefault({}),
        /**
         * Budgets of the services open without a token (health, reflection): their own,
         * so that anonymous calls cannot take what authenticated ones need, and one
         * client's watches cannot stop the health checks of another.
         */
        open_services: OpenServiceLimitsSchema.prefault({}),
      })
      .strict()
      .superRefine((limits, ctx) => {
        for (const key of ["default_timeout_ms", "default_stream_timeout_ms"] as const) {
          const value = limits[key];
          if (value !== undefined && value > limits.max_timeout_ms) {
            ctx.addIssue({
              code: "custom",
              path: [key],
              message: `${key} (${value}) must be <= max_timeout_ms (${limits.max_timeout_ms}), the longest deadline a call may have`,
            });
          }
        }
      })
      .prefault({}),
    auth: z
      .object({
        /** Shared bearer token; unset means no auth. */
        token: z.string().min(1).optional(),
      })
      .strict()
      .default({}),
    shutdown: z
      .object({
        /** After NOT_SERVING, keep serving this long so balancers notice, ms. */
        drain_delay_ms: z.number().int().min(0).default(1_000),
        /** Then wait this long for in-flight calls before aborting them, ms. */
        grace_period_ms: z.number().int().min(0).default(10_000),
      })
      .strict()
      .default({ drain_delay_ms: 1_000, grace_period_ms: 10_000 }),
  })
  .strict();

export type ServerConfig = z.infer<typeof ServerConfigSchema>;
export type ServerLimits = ServerConfig["limits"];
/** The section as a caller may write it: every key optional, defaults filled in by serve(). */
export type ServerConfigInput = z.input<typeof ServerConfigSchema>;
