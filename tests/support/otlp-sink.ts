// A loopback OTLP/HTTP trace sink standing in for the collector: it accepts what
// @opentelemetry/exporter-trace-otlp-proto posts to /v1/traces (ExportTraceServiceRequest,
// protobuf), decodes the spans, and draws a trace as an indented tree.
//
// The decoder reads only the fields the tests look at, by their numbers in
// opentelemetry-proto (trace/v1/trace.proto, common/v1/common.proto, resource/v1/resource.proto).
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { BinaryReader } from "@bufbuild/protobuf/wire";

export interface SinkSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean>;
  /** Trace and span ids this span links to. */
  links: { traceId: string; spanId: string }[];
  /** The resource's service.name. */
  service: string;
}

export interface OtlpSink {
  /** The base URL to give as OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans: SinkSpan[];
  /** Requests received, by path. */
  requests: string[];
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const spans: SinkSpan[] = [];
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests.push(req.url ?? "");
      if (req.url === "/v1/traces") spans.push(...decodeTraces(new Uint8Array(Buffer.concat(chunks))));
      // An empty ExportTraceServiceResponse: everything accepted.
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The spans of one ExportTraceServiceRequest. */
export function decodeTraces(bytes: Uint8Array): SinkSpan[] {
  const spans: SinkSpan[] = [];
  each(bytes, 1, (resourceSpans) => {
    let service = "";
    each(resourceSpans, 1, (resource) => {
      const attributes: Record<string, string | number | boolean> = {};
      each(resource, 1, (keyValue) => readKeyValue(keyValue, attributes));
      service = String(attributes["service.name"] ?? "");
    });
    each(resourceSpans, 2, (scopeSpans) => each(scopeSpans, 2, (span) => spans.push(readSpan(span, service))));
  });
  return spans;
}

/** Calls `read` with the bytes of each occurrence of message field `field`. */
function each(bytes: Uint8Array, field: number, read: (bytes: Uint8Array) => void): void {
  fields(bytes, (f, reader) => {
    if (f !== field) return false;
    read(reader.bytes());
    return true;
  });
}

function readSpan(bytes: Uint8Array, service: string): SinkSpan {
  const span: SinkSpan = {
    traceId: "",
    spanId: "",
    parentSpanId: "",
    name: "",
    kind: 0,
    startNs: 0n,
    endNs: 0n,
    attributes: {},
    links: [],
    service,
  };
  fields(bytes, (field, reader) => {
    if (field === 1) span.traceId = hex(reader.bytes());
    else if (field === 2) span.spanId = hex(reader.bytes());
    else if (field === 4) span.parentSpanId = hex(reader.bytes());
    else if (field === 5) span.name = reader.string();
    else if (field === 6) span.kind = reader.int32();
    else if (field === 7) span.startNs = BigInt(reader.fixed64());
    else if (field === 8) span.endNs = BigInt(reader.fixed64());
    else if (field === 9) readKeyValue(reader.bytes(), span.attributes);
    else if (field === 13) {
      const link = { traceId: "", spanId: "" };
      fields(reader.bytes(), (f, r) => {
        if (f === 1) link.traceId = hex(r.bytes());
        else if (f === 2) link.spanId = hex(r.bytes());
        else return false;
        return true;
      });
      span.links.push(link);
    } else return false;
    return true;
  });
  return span;
}

/** KeyValue { key = 1; AnyValue value = 2 } with AnyValue's string, bool, int and double. */
function readKeyValue(bytes: Uint8Array, into: Record<string, string | number | boolean>): void {
  let key = "";
  let value: string | number | boolean = "";
  fields(bytes, (field, reader) => {
    if (field === 1) key = reader.string();
    else if (field === 2)
      fields(reader.bytes(), (f, r) => {
        if (f === 1) value = r.string();
        else if (f === 2) value = r.bool();
        else if (f === 3) value = Number(r.int64());
        else if (f === 4) value = r.double();
        else return false;
        return true;
      });
    else return false;
    return true;
  });
  into[key] = value;
}

/** Calls `read` per field; a field it does not read (returns false) is skipped. */
function fields(bytes: Uint8Array, read: (field: number, reader: BinaryReader) => boolean): void {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    const start = reader.pos;
    if (!read(field, reader)) {
      reader.pos = start;
      reader.skip(wireType, field);
    }
  }
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

/**
 * One trace as text: each span under its parent, in start order, with its service and the
 * attributes named in `show`; a span whose parent was not received is drawn at the top.
 */
export function drawTrace(spans: readonly SinkSpan[], show: readonly string[] = []): string {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string, SinkSpan[]>();
  for (const span of spans) {
    const parent = ids.has(span.parentSpanId) ? span.parentSpanId : "";
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const lines: string[] = [];
  const draw = (parent: string, depth: number) => {
    const kids = (children.get(parent) ?? []).sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0));
    for (const span of kids) {
      const ms = Number(span.endNs - span.startNs) / 1e6;
      const attrs = show.filter((k) => k in span.attributes).map((k) => `${k}=${span.attributes[k]}`);
      lines.push(`${"  ".repeat(depth)}${span.name}  [${span.service}] ${ms.toFixed(1)} ms${attrs.length ? `  ${attrs.join(" ")}` : ""}`);
      draw(span.spanId, depth + 1);
    }
  };
  draw("", 0);
  return lines.join("\n");
}
