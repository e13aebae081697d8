import { describe, expect, it } from "vitest";
import type { ReplMessage, ReplResponse } from "../repl/protocol.js";
import { isDeclaredConstant, readAxiomsReport } from "./axioms.js";

function answer(...messages: ReplMessage[]): ReplResponse {
  return { kind: "command", response: { env: 3, messages } };
}
const info = (data: string): ReplMessage => ({ severity: "info", pos: { line: 1, column: 0 }, endPos: { line: 1, column: 6 }, data });

describe("readAxiomsReport", () => {
  it("reads the axioms of Lean's report (texts from lean4 tests/lean/run/collectAxioms.lean)", () => {
    expect(readAxiomsReport(answer(info("'A2' depends on axioms: [A0, A1, A2]")))).toEqual({
      found: true,
      constant: "A2",
      axioms: ["A0", "A1", "A2"],
    });
    expect(readAxiomsReport(answer(info("'one_add_one' depends on axioms: [Lean.ofReduceBool, Lean.trustCompiler]")))).toEqual({
      found: true,
      constant: "one_add_one",
      axioms: ["Lean.ofReduceBool", "Lean.trustCompiler"],
    });
    expect(readAxiomsReport(answer(info("'Classical.em' depends on axioms: [Classical.choice, propext, Quot.sound]")))).toMatchObject({
      axioms: ["Classical.choice", "propext", "Quot.sound"],
    });
  });

  it("reads a list Lean wrapped over lines, and names quoted with backticks", () => {
    expect(readAxiomsReport(answer(info("`t` depends on axioms: [propext,\n Classical.choice,\n Quot.sound]")))).toEqual({
      found: true,
      constant: "t",
      axioms: ["propext", "Classical.choice", "Quot.sound"],
    });
  });

  it("reads a theorem that depends on no axiom", () => {
    expect(readAxiomsReport(answer(info("'Nat.add_zero' does not depend on any axioms")))).toEqual({
      found: true,
      constant: "Nat.add_zero",
      axioms: [],
    });
  });

  it("reports the theorem missing on an error, a REPL error or no report", () => {
    const error: ReplMessage = {
      severity: "error",
      pos: { line: 1, column: 14 },
      endPos: { line: 1, column: 17 },
      data: "Unknown constant `foo`",
    };
    expect(readAxiomsReport(answer(error))).toEqual({ found: false, detail: "Unknown constant `foo`" });
    expect(readAxiomsReport({ kind: "error", response: { message: "Unknown environment." } })).toEqual({
      found: false,
      detail: "Unknown environment.",
    });
    expect(readAxiomsReport(answer(info("something else")))).toEqual({
      found: false,
      detail: "no axioms report in the answer to #print axioms",
    });
    expect(readAxiomsReport(answer())).toMatchObject({ found: false });
  });
});

describe("isDeclaredConstant", () => {
  it("matches the declared name, also inside the context's namespace, ignoring «quotes»", () => {
    expect(isDeclaredConstant("foo", "foo")).toBe(true);
    expect(isDeclaredConstant("Bar.foo", "foo")).toBe(true);
    expect(isDeclaredConstant("my thm", "«my thm»")).toBe(true);
    expect(isDeclaredConstant("foo_aux", "foo")).toBe(false);
    expect(isDeclaredConstant("Barfoo", "foo")).toBe(false);
  });
});
