// Test helper: real replicas of InferenceService, each its own HTTP/2 server
// on a loopback address, that can crash (kill) or shut down cleanly (close).
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { endpointUrl } from "../../src/client/dns-resolver.js";

export type InferenceImpl = Partial<ServiceImpl<typeof InferenceService>>;

export interface Replica {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  /** Stops listening and destroys every open connection, like a crashed pod. */
  kill(): Promise<void>;
  /** Stops listening; resolves once clients have closed their connections. */
  close(): Promise<void>;
}

/** Answers Tokenize with the replica's name as templated text, so tests can see who served. */
export function tokenizeAs(name: string): InferenceImpl {
  return { tokenize: () => ({ tokenIds: [1, 2, 3], templatedText: name }) };
}

export async function startReplica(
  name: string,
  impl: InferenceImpl = tokenizeAs(name),
  host = "127.0.0.1",
  port = 0,
  /** Serve TLS with this certificate (PEM). */
  tls?: { key: string | Buffer; cert: string | Buffer },
): Promise<Replica> {
  const handler = connectNodeAdapter({ routes: (router) => router.service(InferenceService, impl) });
  const server = tls ? http2.createSecureServer({ ...tls }, handler) : http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const boundPort = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    name,
    port: boundPort,
    url: endpointUrl(host, boundPort, tls !== undefined),
    close,
    kill() {
      const closed = close();
      for (const session of sessions) session.destroy();
      return closed;
    },
  };
}

/** Rejects when `promise` takes longer than `ms`. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
