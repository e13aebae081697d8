import { describe, expect, it } from "vitest";
import { encodeRequest, ResponseFramer } from "./framing.js";

describe("encodeRequest", () => {
  it("writes one line of JSON and a blank line, newlines in Lean code escaped", () => {
    const encoded = encodeRequest({ cmd: "theorem t : True := by\n  trivial", env: 0 });
    expect(encoded).toBe('{"cmd":"theorem t : True := by\\n  trivial","env":0}\n\n');
    expect(encoded.trimEnd().includes("\n")).toBe(false);
  });

  it("refuses a request the REPL could not parse, before it is written", () => {
    expect(() => encodeRequest({ cmd: "x", env: -1 })).toThrow("invalid REPL request: env");
    expect(() => encodeRequest({ tactic: "simp", proofState: 1.5 })).toThrow("invalid REPL request: proofState");
    expect(() => encodeRequest({ cmd: "bad \uD800 surrogate" })).toThrow("lone UTF-16 surrogate");
    expect(() => encodeRequest({ cmd: "nul \u0000" })).toThrow("NUL");
    expect(() => encodeRequest({ cmd: "x", extra: 1 } as never)).toThrow("invalid REPL request");
  });
});

describe("ResponseFramer", () => {
  const response = '{"messages":\n [{"severity": "info",\n   "data": "a\\n\\nb"}],\n "env": 1}';

  it("returns a multi-line response once its blank line arrives, however it is chunked", () => {
    const whole = `${response}\n\n`;
    for (let size = 1; size <= whole.length; size += 7) {
      const framer = new ResponseFramer();
      const frames: string[] = [];
      for (let i = 0; i < whole.length; i += size) frames.push(...framer.push(whole.slice(i, i + size)));
      expect(frames, `chunks of ${size}`).toEqual([response]);
      expect(framer.pendingLength).toBe(0);
    }
  });

  it("splits back-to-back responses and keeps an unfinished one", () => {
    const framer = new ResponseFramer();
    expect(framer.push('{"env": 0}\n\n{"env": 1}\n\n{"env"')).toEqual(['{"env": 0}', '{"env": 1}']);
    expect(framer.pendingLength).toBe('{"env"'.length);
    expect(framer.push(": 2}\n")).toEqual([]);
    expect(framer.push("\n")).toEqual(['{"env": 2}']);
  });
});
