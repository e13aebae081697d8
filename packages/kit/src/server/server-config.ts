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
        /** Calls in flight per service before RESOURCE_EXHAUSTED; 0 = unlimited. */
        max_concurrent_calls: z.number().int().min(0).default(256),
        /** Longest deadline a client may ask for, ms. */
        max_timeout_ms: z.number().int().positive().default(600_000),
      })
      .strict()
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
