// The HTTP/2 side of the port: the kit's own HTTP/2 server, given every connection the
// listener recognises as HTTP/2, routing each stream by its content type: gRPC to the
// gRPC engine (grpc-js), anything else (Connect, gRPC-Web) to connect-node. Owning the
// sessions is also what lets the server say GOAWAY when a connection idles or the server
// drains, and cut the ones that outstay it.
import * as http2 from "node:http2";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";

export interface Http2SessionsOptions {
  streamsPerConnection: number;
  grpc(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void;
  other(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, rawHeaders: string[]): void;
  logger: Logger;
}

export interface Http2Sessions {
  accept(connection: Duplex): void;
  /** GOAWAY on the session of this connection: its calls finish, it takes no new ones. */
  goAway(connection: string): void;
  /** GOAWAY on every session; after graceMs the ones still open are cut. */
  drain(graceMs: number): void;
  /** HTTP/2 streams not yet closed: an answered call's stream stays open until its last frames are out. */
  openStreams(): number;
  close(): void;
}

export function createHttp2Sessions(options: Http2SessionsOptions): Http2Sessions {
  const sessions = new Map<string, http2.ServerHttp2Session>();
  let openStreams = 0;
  const streamClosed = () => {
    openStreams--;
  };
  const server = http2.createServer({
    settings: { maxConcurrentStreams: options.streamsPerConnection },
    // As grpc-js sets them on its own servers: messages and streams are capped by server.limits,
    // and Node's 10 MB session default would refuse new streams while a large answer is queued.
    maxSessionMemory: Number.MAX_SAFE_INTEGER,
    maxSendHeaderBlockLength: Number.MAX_SAFE_INTEGER,
  });
  server.on("session", (session: http2.ServerHttp2Session) => {
    const key = `${session.socket.remoteAddress}|${session.socket.remotePort}`;
    sessions.set(key, session);
    session.on("error", (error) => options.logger.debug({ err: error }, "session error"));
    // Only this session's entry: another may hold the key by now.
    session.once("close", () => sessions.get(key) === session && sessions.delete(key));
  });
  server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, _flags: number, rawHeaders: string[]) => {
    openStreams++;
    stream.once("close", streamClosed);
    const contentType = headers["content-type"] ?? "";
    if (contentType.startsWith("application/grpc") && !contentType.startsWith("application/grpc-web")) options.grpc(stream, headers);
    else options.other(stream, headers, rawHeaders);
  });
  return {
    accept: (connection) => server.emit("connection", connection),
    goAway(connection) {
      const session = sessions.get(connection);
      if (session && !session.closed) session.close();
    },
    drain(graceMs) {
      for (const session of sessions.values()) if (!session.closed) session.close();
      setTimeout(() => {
        for (const session of sessions.values()) session.destroy();
      }, graceMs).unref();
    },
    openStreams: () => openStreams,
    close() {
      for (const session of sessions.values()) session.destroy();
    },
  };
}
