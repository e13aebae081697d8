// The status message of a gRPC error (`grpc-message`) in the spec's own encoding:
// percent-encode only what is not printable ASCII, and "%" itself
// (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md, Responses).
//
// Why: connect-node writes it with encodeURIComponent, which also encodes ":", "/", "?",
// "#", "@", "&", "=", "+", "," and ";". Decoders that follow the spec read both alike, but
// @grpc/grpc-js decodes with decodeURI, which leaves those escaped: a grpc-js client
// would read `training.steps%3A must be ...`. Re-encoded here, every client reads the
// message as written.
import { Http2ServerResponse, type OutgoingHttpHeaders } from "node:http2";

export function encodeGrpcMessage(message: string): string {
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function respec(headers: OutgoingHttpHeaders | undefined): void {
  const value = headers?.["grpc-message"];
  if (typeof value !== "string") return;
  try {
    headers!["grpc-message"] = encodeGrpcMessage(decodeURIComponent(value));
  } catch {
    // Not percent-encoding connect wrote: leave it as it is.
  }
}

/** Node's compat response, with grpc-message re-encoded wherever it is written (headers of a trailers-only answer, or trailers). */
export class GrpcMessageResponse extends Http2ServerResponse {
  override writeHead(statusCode: number, ...rest: unknown[]): this {
    respec(rest.find((r): r is OutgoingHttpHeaders => typeof r === "object" && r !== null));
    return (super.writeHead as (code: number, ...args: unknown[]) => this)(statusCode, ...rest);
  }

  override addTrailers(trailers: OutgoingHttpHeaders): void {
    respec(trailers);
    super.addTrailers(trailers);
  }
}
