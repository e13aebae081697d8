// Answers a Connect or gRPC-Web request with an error before its body is read (auth,
// budgets), in the protocol the client spoke, and makes sure the unread body is never
// read either: HTTP/1.1 closes the connection, HTTP/2 resets the stream with NO_ERROR
// once the answer is out (RFC 9113 §8.1). The encodings are connect's own (its protocol
// helpers); this file only picks one by the request's content type.
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { constants, Http2ServerResponse } from "node:http2";
import type { ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus, endStreamFlag, endStreamToJson, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";

export type WebProtocol = "grpc-web" | "connect-stream" | "connect-unary";

export function webProtocol(headers: IncomingHttpHeaders): WebProtocol {
  const contentType = headers["content-type"] ?? "";
  if (contentType.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType.startsWith("application/connect+")) return "connect-stream";
  // application/json, application/proto, and Connect GET requests (no body, no content type).
  return "connect-unary";
}

export function respondEarlyError(headers: IncomingHttpHeaders, response: ServerResponse | Http2ServerResponse, error: ConnectError): void {
  if (response.headersSent || response.destroyed) return;
  const http2 = response instanceof Http2ServerResponse;
  if (!http2) response.setHeader("connection", "close");
  const protocol = webProtocol(headers);
  if (protocol === "grpc-web") {
    // A trailers-only answer: the status travels in the headers.
    response.setHeader("content-type", headers["content-type"] ?? "application/grpc-web+proto");
    for (const [key, value] of setTrailerStatus(new Headers(), error)) response.setHeader(key, value);
    response.writeHead(200);
    response.end();
  } else if (protocol === "connect-stream") {
    const json = Buffer.from(JSON.stringify(endStreamToJson(error.metadata, error, undefined)));
    const envelope = Buffer.alloc(5 + json.length);
    envelope[0] = endStreamFlag;
    envelope.writeUInt32BE(json.length, 1);
    json.copy(envelope, 5);
    response.writeHead(200, { "content-type": headers["content-type"] });
    response.end(envelope);
  } else {
    response.writeHead(codeToHttpStatus(error.code), { "content-type": "application/json" });
    response.end(Buffer.from(errorToJsonBytes(error, {})));
  }
  if (http2) {
    const { stream } = response;
    if (!stream.destroyed && !stream.closed) stream.close(constants.NGHTTP2_NO_ERROR);
    stream.resume();
  }
}
