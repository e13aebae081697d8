// Framing of the REPL's stdin/stdout. A request is one JSON object on one line
// followed by a blank line (the REPL reads lines up to a blank one). A response is
// Lean's pretty-printed JSON, several lines but never a blank one (newlines inside
// strings are escaped), followed by a blank line.
import { validateRequest, type ReplRequest } from "./protocol.js";

/** The bytes to write for a request, after validating it. JSON.stringify escapes every newline, so it is one line. */
export function encodeRequest(request: ReplRequest): string {
  return `${JSON.stringify(validateRequest(request))}\n\n`;
}

/** Splits stdout text into response frames; keeps the unfinished tail. */
export class ResponseFramer {
  private buffer = "";
  /** Where the search for the end of the current frame resumes, so that a long response is scanned once. */
  private scanFrom = 0;

  /** Appends a chunk and returns the frames it completed, in order. */
  push(chunk: string): string[] {
    this.buffer += chunk;
    const frames: string[] = [];
    for (;;) {
      if (this.scanFrom === 0) {
        // Blank lines between frames (the REPL prints exactly one) are not frames.
        this.buffer = this.buffer.replace(/^\s+/, "");
      }
      const end = this.buffer.indexOf("\n\n", Math.max(0, this.scanFrom - 1));
      if (end < 0) {
        this.scanFrom = this.buffer.length;
        return frames;
      }
      frames.push(this.buffer.slice(0, end));
      this.buffer = this.buffer.slice(end + 2);
      this.scanFrom = 0;
    }
  }

  /** Characters of an unfinished frame held so far. */
  get pendingLength(): number {
    return this.buffer.length;
  }
}
