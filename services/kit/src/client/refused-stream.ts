// connect-node maps an HTTP/2 stream reset with REFUSED_STREAM to UNAVAILABLE
// (connectErrorFromH2ResetCode), but when Node emits the stream's "error" event
// before its "close" event the same reset surfaces as INTERNAL. This happens
// to calls sent on the connection of a replica that just died. REFUSED_STREAM
// guarantees the server processed nothing (RFC 9113 §8.7), so the code is put
// back to UNAVAILABLE, which makes the call retryable like a refused connection.
import { Code, ConnectError } from "@connectrpc/connect";

export function restoreRefusedStream(error: ConnectError): ConnectError {
  if (error.code !== Code.Internal || !causedByRefusedStream(error.cause)) return error;
  return new ConnectError(error.rawMessage, Code.Unavailable, error.metadata, undefined, error.cause);
}

function causedByRefusedStream(reason: unknown): boolean {
  const seen = new Set<unknown>();
  while (reason instanceof Error && !seen.has(reason)) {
    // Node's message for this code is "Stream closed with error code <name>".
    const code = (reason as NodeJS.ErrnoException).code;
    if (code === "ERR_HTTP2_STREAM_ERROR" && reason.message.endsWith("NGHTTP2_REFUSED_STREAM")) {
      return true;
    }
    seen.add(reason);
    reason = reason.cause;
  }
  return false;
}
