import { describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { restoreRefusedStream } from "./refused-stream.js";

const nodeError = (code: string, message = code) => Object.assign(new Error(message), { code });

describe("restoreRefusedStream", () => {
  it("turns a connection reset mid-call (ABORTED from connect-node) into UNAVAILABLE", () => {
    const error = new ConnectError("read ECONNRESET", Code.Aborted, undefined, undefined, nodeError("ECONNRESET"));
    expect(restoreRefusedStream(error).code).toBe(Code.Unavailable);
  });

  it("turns a REFUSED_STREAM reset reported as INTERNAL into UNAVAILABLE", () => {
    const cause = nodeError("ERR_HTTP2_STREAM_ERROR", "Stream closed with error code NGHTTP2_REFUSED_STREAM");
    expect(restoreRefusedStream(new ConnectError("x", Code.Internal, undefined, undefined, cause)).code).toBe(Code.Unavailable);
  });

  it("turns a CANCEL reset the caller did not ask for into UNAVAILABLE, but keeps the caller's own cancel", () => {
    const reset = () => new ConnectError("http/2 stream closed with error code CANCEL (0x8)", Code.Canceled);
    expect(restoreRefusedStream(reset(), new AbortController().signal).code).toBe(Code.Unavailable);
    const cancelled = new AbortController();
    cancelled.abort();
    expect(restoreRefusedStream(reset(), cancelled.signal).code).toBe(Code.Canceled);
  });

  it("leaves a server's own ABORTED or INTERNAL status alone", () => {
    expect(restoreRefusedStream(new ConnectError("conflict", Code.Aborted)).code).toBe(Code.Aborted);
    expect(restoreRefusedStream(new ConnectError("bug", Code.Internal)).code).toBe(Code.Internal);
    const other = new ConnectError("x", Code.Aborted, undefined, undefined, nodeError("ENOENT"));
    expect(restoreRefusedStream(other).code).toBe(Code.Aborted);
  });
});
