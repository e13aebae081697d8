// How a server-side HTTP/2 stream ends, for the accounting of calls in flight.
import type { ServerHttp2Stream } from "node:http2";

/**
 * Ends a stream from the server side for good. close() alone sends RST_STREAM, but
 * Node emits "close" only once the readable side has ended, and request data that a
 * handler stopped reading stays buffered and paused; resume() lets it drain.
 */
export function resetStream(stream: ServerHttp2Stream, code: number): void {
  if (stream.destroyed) return;
  if (!stream.closed) stream.close(code);
  stream.resume();
}

/**
 * Calls `done` once the server's side of the stream is over: its answer is complete
 * ("finish"), or the stream closed first. A client may keep its own side open after
 * the answer (connect's clients do after an error in the middle of an upload); that
 * costs a flow-control window of buffered bytes, not a call's work, so it holds no slot.
 */
export function onceAnsweredOrClosed(stream: ServerHttp2Stream, done: () => void): void {
  let called = false;
  const once = () => {
    if (called) return;
    called = true;
    done();
  };
  stream.once("finish", once);
  stream.once("close", once);
}
