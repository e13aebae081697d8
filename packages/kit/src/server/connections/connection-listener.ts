// The one port a server listens on. It accepts each connection under the registry's
// caps and deadlines, reads its protocol (the HTTP/2 preface, or an HTTP/1.1 request),
// and hands it on: HTTP/2 to the kit's sessions (http2-sessions.ts, which give each gRPC
// stream to grpc-js and each Connect or gRPC-Web stream to connect-node), HTTP/1.1
// (Connect, gRPC-Web) to connect-node.
//
// With TLS, ALPN decides first: a client that offers h2 gets HTTP/2 (gRPC, Connect and
// gRPC-Web are all served on it); one that offers only http/1.1 gets that.
import { readFileSync } from "node:fs";
import * as net from "node:net";
import * as tls from "node:tls";
import type { Logger } from "pino";
import type { ConnectionRegistry } from "./connection-registry.js";
import { sniffProtocol, type SniffedProtocol } from "./protocol-sniff.js";

export interface ConnectionListenerOptions {
  host: string;
  port: number;
  tls?: { cert_file: string; key_file: string };
  registry: ConnectionRegistry;
  /** For the TLS handshake; the registry's deadline covers it too. */
  handshakeTimeoutMs: number;
  serve: Record<SniffedProtocol, (socket: net.Socket) => void>;
  logger: Logger;
}

export interface ConnectionListener {
  port: number;
  /** Stops accepting; connections already open stay (the engines drain them). */
  close(): void;
}

export async function listenForConnections(options: ConnectionListenerOptions): Promise<ConnectionListener> {
  const { registry, logger } = options;

  const admit = (socket: net.Socket): string | undefined => {
    // Resets and broken pipes end a connection, never the process.
    socket.on("error", (error) => logger.debug({ err: error }, "connection error"));
    const key = registry.admit(socket);
    if (key === undefined) {
      logger.warn(
        { peer: socket.remoteAddress, connections: registry.size },
        "connection refused: every connection in its scope has a call open (server.limits.connections)",
      );
      socket.destroy();
      return undefined;
    }
    return key;
  };

  const route = async (socket: net.Socket, protocol?: SniffedProtocol) => {
    const decided = protocol ?? (await sniffProtocol(socket));
    if (decided === undefined || socket.destroyed) return;
    options.serve[decided](socket);
  };

  let server: net.Server;
  if (options.tls) {
    const secure = tls.createServer({
      cert: readFileSync(options.tls.cert_file),
      key: readFileSync(options.tls.key_file),
      // The server's preference: HTTP/2 whenever the client offers it (every protocol is
      // served on it), HTTP/1.1 for a client that offers only that.
      ALPNProtocols: ["h2", "http/1.1"],
      handshakeTimeout: options.handshakeTimeoutMs,
    });
    secure.on("connection", (raw: net.Socket) => {
      admit(raw);
    });
    secure.on("secureConnection", (socket: tls.TLSSocket) => {
      socket.on("error", (error) => logger.debug({ err: error }, "connection error"));
      void route(socket, socket.alpnProtocol === "h2" ? "http2" : undefined);
    });
    secure.on("tlsClientError", (error) => logger.debug({ err: error }, "TLS handshake failed"));
    server = secure;
  } else {
    server = net.createServer({ pauseOnConnect: true, noDelay: true }, (socket) => {
      if (admit(socket) !== undefined) void route(socket);
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", (error) => logger.error({ err: error }, "listener error"));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => {
      server.close();
    },
  };
}
