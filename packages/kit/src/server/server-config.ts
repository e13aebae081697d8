// The `server` section every service's config shares (YAML keys are snake_case).
import { z } from "zod";

export const ServerConfigSchema = z
  .object({
    /** Address to bind; loopback unless a deployment asks for more. */
    host: z.string().min(1).default("127.0.0.1"),
    /** Port; 0 picks a free one. */
    port: z.number().int().min(0).max(65535).default(0),
    /** Serve TLS (HTTP/2 over TLS) instead of h2c; both files are PEM. */
    tls: z
      .object({
        /** The certificate chain (PEM). */
        cert_file: z.string().min(1),
        /** The certificate's private key (PEM). */
        key_file: z.string().min(1),
      })
      .strict()
      .optional(),
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
         * Calls in flight per service before RESOURCE_EXHAUSTED; 0 = unlimited. Every
         * HTTP/2 stream counts from its headers to its close (health watches and
         * reflection included, each against its own service).
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
      .default({ read_max_bytes: 4 * 1024 * 1024, write_max_bytes: 16 * 1024 * 1024, max_concurrent_calls: 256, max_timeout_ms: 600_000 }),
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
