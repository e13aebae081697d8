// Transport failures that connect-node reports with other codes than gRPC clients
// use, put back to UNAVAILABLE (the code gRPC gives a lost or refused connection,
// and the one the balanced transport retries):
// - a stream reset with REFUSED_STREAM surfaces as INTERNAL when Node emits the
//   stream's "error" before its "close" (calls sent to a replica that just died);
//   REFUSED_STREAM guarantees the server processed nothing (RFC 9113 §8.7);
// - a connection reset or broken pipe mid-call (the replica's process died) surfaces
//   as ABORTED; grpc-go and grpc-js report it as UNAVAILABLE. The call may have run
//   on the dead replica, so retrying it assumes, as gRPC's retry policy does for
//   UNAVAILABLE, that the method is safe to repeat (every mesh RPC retried this way
//   is: Verify, Score, Generate and Tokenize have no side effects);
// - when the connection dies, Node may also close its open streams with a CANCEL
//   reset, which connect-node reports as CANCELED; if the caller did not cancel,
//   the transport did, and that is a lost connection too.
import { Code, ConnectError } from "@connectrpc/connect";

/** connect-node's message for a stream reset with CANCEL (connectErrorFromH2ResetCode). */
const H2_CANCEL_RESET = "http/2 stream closed with error code CANCEL";

const LOST_CONNECTION = new Set(["ECONNRESET", "EPIPE", "ERR_HTTP2_SESSION_ERROR", "ERR_HTTP2_GOAWAY_SESSION"]);

export function restoreRefusedStream(error: ConnectError, callerSignal?: AbortSignal): ConnectError {
  const retryable =
    (error.code === Code.Internal && causedBy(error.cause, isRefusedStream)) ||
    (error.code === Code.Aborted && causedBy(error.cause, isLostConnection)) ||
    (error.code === Code.Canceled && callerSignal?.aborted !== true && error.rawMessage.startsWith(H2_CANCEL_RESET));
  if (!retryable) return error;
  return new ConnectError(error.rawMessage, Code.Unavailable, error.metadata, undefined, error.cause);
}

function isRefusedStream(reason: Error): boolean {
  // Node's message for this code is "Stream closed with error code <name>".
  return (reason as NodeJS.ErrnoException).code === "ERR_HTTP2_STREAM_ERROR" && reason.message.endsWith("NGHTTP2_REFUSED_STREAM");
}

function isLostConnection(reason: Error): boolean {
  return LOST_CONNECTION.has((reason as NodeJS.ErrnoException).code ?? "");
}

function causedBy(reason: unknown, test: (error: Error) => boolean): boolean {
  const seen = new Set<unknown>();
  while (reason instanceof Error && !seen.has(reason)) {
    if (test(reason)) return true;
    seen.add(reason);
    reason = reason.cause;
  }
  return false;
}
