// Small pieces of the gRPC-over-HTTP/2 wire format
// (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md) used by the
// unary fast path: deadlines, status messages and length-prefixed frames.
import { Code, ConnectError } from "@connectrpc/connect";

const TIMEOUT_UNITS_MS: Record<string, number> = {
  H: 3_600_000,
  M: 60_000,
  S: 1_000,
  m: 1,
  u: 1e-3,
  n: 1e-6,
};

/** Parses a `grpc-timeout` header ("100m", "440929u"); undefined when absent. */
export function parseGrpcTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (!match) {
    throw new ConnectError(
      `invalid grpc-timeout header "${value}": expected 1-8 digits followed by one of H, M, S, m, u, n`,
      Code.InvalidArgument,
    );
  }
  return Number(match[1]) * TIMEOUT_UNITS_MS[match[2]!]!;
}

/** Percent-encodes a status message as grpc-message requires (printable ASCII except %). */
export function encodeGrpcMessage(message: string): string {
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Wraps a serialized message in the 5-byte gRPC frame header (uncompressed). */
export function frameMessage(payload: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(5 + payload.length);
  frame[0] = 0;
  frame.writeUInt32BE(payload.length, 1);
  frame.set(payload, 5);
  return frame;
}

/**
 * Extracts the single message of a unary request body. Trailing bytes, a
 * compressed flag or a short frame are protocol errors.
 */
export function unframeUnaryRequest(body: Buffer): Uint8Array {
  if (body.length < 5) {
    throw new ConnectError(`request body of ${body.length} bytes holds no gRPC frame (need at least 5)`, Code.Internal);
  }
  if (body[0] !== 0) {
    throw new ConnectError("compressed frame received without a grpc-encoding header", Code.Internal);
  }
  const length = body.readUInt32BE(1);
  if (body.length !== 5 + length) {
    throw new ConnectError(
      `unary request must hold exactly one message: frame says ${length} bytes, body has ${body.length - 5}`,
      Code.Internal,
    );
  }
  return body.subarray(5);
}
