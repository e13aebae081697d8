import { describe, expect, it } from "vitest";
import { parseResponse, validateRequest } from "./protocol.js";

describe("parseResponse", () => {
  it("tells the three response shapes apart by their keys", () => {
    expect(parseResponse({ env: 0 })).toEqual({ kind: "command", response: { env: 0 } });
    expect(parseResponse({ proofStatus: "Completed", proofState: 1, goals: [] })).toEqual({
      kind: "proofStep",
      response: { proofStatus: "Completed", proofState: 1, goals: [] },
    });
    expect(parseResponse({ message: "Unknown proof state." })).toEqual({ kind: "error", response: { message: "Unknown proof state." } });
  });

  it("refuses values of none of the shapes", () => {
    for (const value of [
      null,
      [],
      "text",
      3,
      {},
      { env: "0" },
      { env: 0, messages: [{ severity: "fatal", pos: { line: 1, column: 0 }, data: "" }] },
    ]) {
      expect(parseResponse(value), JSON.stringify(value)).toBeUndefined();
    }
  });

  it("keeps a message without an end position (null or absent)", () => {
    const message = { severity: "error", pos: { line: 1, column: 2 }, endPos: null, data: "x" };
    expect(parseResponse({ env: 2, messages: [message] })).toEqual({ kind: "command", response: { env: 2, messages: [message] } });
  });
});

describe("validateRequest", () => {
  it("passes the two requests the service sends", () => {
    expect(validateRequest({ cmd: "import Mathlib" })).toEqual({ cmd: "import Mathlib" });
    expect(validateRequest({ cmd: "#print axioms t", env: 3, allTactics: true })).toEqual({
      cmd: "#print axioms t",
      env: 3,
      allTactics: true,
    });
    expect(validateRequest({ tactic: "simp", proofState: 0 })).toEqual({ tactic: "simp", proofState: 0 });
  });
});
