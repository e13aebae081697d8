// A verifier served for real on loopback (the kit's serve()), with a client that
// does not retry (tests want to see each status code as the server sent it).
import { ConnectError, type Client } from "@connectrpc/connect";
import { LeanVerifierService } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { createServiceClient, serve, type RunningServer } from "@lean-grpo/kit";
import { VerifierConfigSchema, type VerifierConfig } from "../../src/config.js";
import { createVerifierService, type VerifierService } from "../../src/service.js";
import { REPO_ROOT } from "./stand-in.js";

type DeepPartial<T> = { [K in keyof T]?: T[K] extends readonly unknown[] ? T[K] : T[K] extends object ? DeepPartial<T[K]> : T[K] };

export interface Harness {
  service: VerifierService;
  server: RunningServer;
  client: Client<typeof LeanVerifierService>;
  close(): Promise<void>;
}

/**
 * Small, fast defaults for tests: one worker, short timeouts, the stand-in's working
 * directory, no sandbox, and the replay tier off unless a test turns it on (with the checker
 * stand-in: `replay: "proved", replay_checker: standIn.checker`).
 */
export function testConfig(config: DeepPartial<VerifierConfig> = {}): VerifierConfig {
  return VerifierConfigSchema.parse({
    ...config,
    server: { port: 0, shutdown: { drain_delay_ms: 0, grace_period_ms: 1000 }, ...config.server },
    repl: {
      cwd: REPO_ROOT,
      pool_size: 1,
      timeout_ms: 10_000,
      header_timeout_ms: 20_000,
      memory_limit_mb: 0,
      replay: "off",
      // The stand-in reads its rules and writes its log where a sandbox would not let it; tests/security runs it sandboxed.
      sandbox: { mode: "none" },
      ...config.repl,
    },
  });
}

export async function startVerifier(config: DeepPartial<VerifierConfig> = {}, env: NodeJS.ProcessEnv = {}): Promise<Harness> {
  const parsed = testConfig(config);
  const service = createVerifierService(parsed, { env });
  const server = await serve({ name: "verifier", services: [service], config: parsed.server });
  const { client, transport } = createServiceClient(LeanVerifierService, {
    endpoints: [server.url],
    retry: { maxAttempts: 1 },
  });
  return {
    service,
    server,
    client,
    async close() {
      transport.close();
      await server.shutdown();
      await service.close();
    },
  };
}

/** The error a call failed with; fails the test if it succeeded. */
export async function rejection(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("expected the call to fail");
}
