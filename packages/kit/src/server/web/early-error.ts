// Answers a Connect or gRPC-Web request with an error before its body is read (auth,
// budgets), in the protocol the client spoke, and closes the connection so that the
// unread body is never read either. The encodings are connect's own (its protocol
// helpers); this file only picks one by the request's content type.
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
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

export function respondEarlyError(headers: IncomingHttpHeaders, response: ServerResponse, error: ConnectError): void {
  if (response.headersSent || response.destroyed) return;
  response.setHeader("connection", "close");
  const protocol = webProtocol(headers);
  if (protocol === "grpc-web") {
    // A trailers-only answer: the status travels in the headers.
    response.setHeader("content-type", headers["content-type"] ?? "application/grpc-web+proto");
    for (const [key, value] of setTrailerStatus(new Headers(), error)) response.setHeader(key, value);
    response.writeHead(200).end();
  } else if (protocol === "connect-stream") {
    const json = Buffer.from(JSON.stringify(endStreamToJson(error.metadata, error, undefined)));
    const envelope = Buffer.alloc(5 + json.length);
    envelope[0] = endStreamFlag;
    envelope.writeUInt32BE(json.length, 1);
    json.copy(envelope, 5);
    response.writeHead(200, { "content-type": headers["content-type"] }).end(envelope);
  } else {
    response.writeHead(codeToHttpStatus(error.code), { "content-type": "application/json" }).end(Buffer.from(errorToJsonBytes(error, {})));
  }
}
