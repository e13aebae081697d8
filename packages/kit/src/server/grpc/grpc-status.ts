// A ConnectError as grpc-js sends it: the same code and message, the error's metadata
// and the handler's trailers as trailers, and its details (google.rpc.Status) in
// grpc-status-details-bin, exactly as connect-node would have written them.
import { Metadata, type StatusObject, type status } from "@grpc/grpc-js";
import type { ConnectError } from "@connectrpc/connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";

const STATUS_HEADERS = new Set(["grpc-status", "grpc-message"]);

export function grpcStatusOf(error: ConnectError, trailers?: Headers): Pick<StatusObject, "code" | "details" | "metadata"> {
  const metadata = trailers ? toMetadata(trailers) : new Metadata();
  appendHeaders(metadata, error.metadata);
  if (error.details.length > 0) {
    // connect's own encoding of the details; the code and message travel as grpc-js writes them.
    const encoded = setTrailerStatus(new Headers(), error).get("grpc-status-details-bin");
    if (encoded) metadata.set("grpc-status-details-bin", Buffer.from(encoded, "base64"));
  }
  // gRPC and connect number their codes alike (1 CANCELLED ... 16 UNAUTHENTICATED).
  return { code: error.code as number as status, details: error.rawMessage, metadata };
}

/** Headers (binary values base64, as fetch Headers hold them) as grpc-js Metadata. */
export function toMetadata(headers: Headers): Metadata {
  const metadata = new Metadata();
  appendHeaders(metadata, headers);
  return metadata;
}

function appendHeaders(metadata: Metadata, headers: Headers) {
  headers.forEach((value, key) => {
    if (STATUS_HEADERS.has(key) || key.startsWith(":")) return;
    if (key.endsWith("-bin")) {
      for (const part of value.split(",")) metadata.add(key, Buffer.from(part.trim(), "base64"));
    } else {
      metadata.add(key, value);
    }
  });
}

/** One request header of a grpc-js call, as a fetch Headers would give it (binary values base64, repeats joined). */
export function metadataValue(metadata: Metadata, name: string): string | undefined {
  const values = metadata.get(name);
  if (values.length === 0) return undefined;
  if (values.length === 1) {
    const only = values[0]!;
    return typeof only === "string" ? only : only.toString("base64");
  }
  return values.map((v) => (typeof v === "string" ? v : v.toString("base64"))).join(", ");
}

export function* metadataEntries(metadata: Metadata): Iterable<[string, string]> {
  for (const [key, values] of Object.entries(metadata.toJSON())) {
    for (const value of values) yield [key, typeof value === "string" ? value : Buffer.from(value).toString("base64")];
  }
}
