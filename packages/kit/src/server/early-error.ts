// Answers a call with an error before its body is read (auth, limits), in the
// protocol the client spoke. The encodings are connect's own (its protocol
// helpers); this file only picks one by the request's content type.
import { constants, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import type { ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus, endStreamFlag, endStreamToJson, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { resetStream } from "./stream-end.js";
import { encodeGrpcMessage } from "./grpc-message-encoding.js";

export type WireProtocol = "grpc" | "grpc-web" | "connect-stream" | "connect-unary";

export function wireProtocol(headers: IncomingHttpHeaders): WireProtocol {
  const contentType = headers["content-type"] ?? "";
  if (contentType.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType.startsWith("application/grpc")) return "grpc";
  if (contentType.startsWith("application/connect+")) return "connect-stream";
  // application/json, application/proto, and Connect GET requests (no body, no content type).
  return "connect-unary";
}

export function respondEarlyError(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, error: ConnectError): void {
  if (stream.destroyed || stream.closed || stream.headersSent) return;
  const protocol = wireProtocol(headers);
  const contentType = headers["content-type"];
  if (protocol === "grpc" || protocol === "grpc-web") {
    // A trailers-only response: the status travels in the one HEADERS frame.
    const response: OutgoingHttpHeaders = { ":status": 200, "content-type": contentType };
    setTrailerStatus(new Headers(), error).forEach((value, key) => {
      response[key] = value;
    });
    if (response["grpc-message"] !== undefined) response["grpc-message"] = encodeGrpcMessage(error.rawMessage);
    stream.respond(response, { endStream: true });
  } else if (protocol === "connect-stream") {
    const json = Buffer.from(JSON.stringify(endStreamToJson(error.metadata, error, undefined)));
    const envelope = Buffer.alloc(5 + json.length);
    envelope[0] = endStreamFlag;
    envelope.writeUInt32BE(json.length, 1);
    json.copy(envelope, 5);
    stream.respond({ ":status": 200, "content-type": contentType });
    stream.end(envelope);
  } else {
    stream.respond({ ":status": codeToHttpStatus(error.code), "content-type": "application/json" });
    stream.end(Buffer.from(errorToJsonBytes(error, {})));
  }
  // The body the client may still be sending is never read: once the answer is out,
  // RST_STREAM(NO_ERROR) tells it to stop (RFC 9113 §8.1).
  resetStream(stream, constants.NGHTTP2_NO_ERROR);
}
