// Which protocol a new connection speaks, from its first bytes: a client that talks
// HTTP/2 without TLS (prior knowledge, as every gRPC client does) opens with the
// connection preface; anything else is read as HTTP/1.1. The bytes read are put back
// so that the server that takes the connection reads them as if it had been first.
import type { Socket } from "node:net";

/** RFC 9113 §3.4. */
const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export type SniffedProtocol = "http2" | "http1";

/** Resolves with the protocol once the first bytes decide it, or undefined if the socket closes first. */
export function sniffProtocol(socket: Socket): Promise<SniffedProtocol | undefined> {
  return new Promise((resolve) => {
    let seen: Buffer = Buffer.alloc(0);
    const finish = (protocol: SniffedProtocol | undefined) => {
      socket.off("data", onData);
      socket.off("close", onClose);
      if (protocol !== undefined) {
        socket.pause();
        socket.unshift(seen);
      }
      resolve(protocol);
    };
    const onData = (chunk: Buffer) => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const compared = Math.min(seen.length, HTTP2_PREFACE.length);
      if (!seen.subarray(0, compared).equals(HTTP2_PREFACE.subarray(0, compared))) return finish("http1");
      if (seen.length >= HTTP2_PREFACE.length) finish("http2");
    };
    const onClose = () => finish(undefined);
    socket.on("data", onData);
    socket.once("close", onClose);
    socket.resume();
  });
}
