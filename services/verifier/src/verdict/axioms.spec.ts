import { describe, expect, it } from "vitest";
import type { ReplMessage, ReplResponse } from "../repl/protocol.js";
import { isDeclaredConstant, printAxiomsCommand, readAxiomsReports } from "./axioms.js";

function answer(...messages: ReplMessage[]): ReplResponse {
  return { kind: "command", response: { env: 3, messages } };
}
const info = (data: string): ReplMessage => ({ severity: "info", pos: { line: 1, column: 0 }, endPos: { line: 1, column: 6 }, data });

describe("readAxiomsReports", () => {
  it("reads the axioms of Lean's report (texts from lean4 tests/lean/run/collectAxioms.lean)", () => {
    expect(readAxiomsReports(answer(info("'A2' depends on axioms: [A0, A1, A2]")))).toEqual({
      found: true,
      reports: [{ constant: "A2", axioms: ["A0", "A1", "A2"] }],
    });
    expect(readAxiomsReports(answer(info("'one_add_one' depends on axioms: [Lean.ofReduceBool, Lean.trustCompiler]")))).toEqual({
      found: true,
      reports: [{ constant: "one_add_one", axioms: ["Lean.ofReduceBool", "Lean.trustCompiler"] }],
    });
  });

  it("reads a list Lean wrapped over lines, names quoted with backticks, and no axioms at all", () => {
    expect(readAxiomsReports(answer(info("`t` depends on axioms: [propext,\n Classical.choice,\n Quot.sound]")))).toEqual({
      found: true,
      reports: [{ constant: "t", axioms: ["propext", "Classical.choice", "Quot.sound"] }],
    });
    expect(readAxiomsReports(answer(info("'Nat.add_zero' does not depend on any axioms")))).toEqual({
      found: true,
      reports: [{ constant: "Nat.add_zero", axioms: [] }],
    });
  });

  it("reads every report Lean printed, one per constant the name resolved to", () => {
    const both = readAxiomsReports(
      answer(info("'foo' depends on axioms: [propext]"), info("'Evil.foo' depends on axioms: [Lean.ofReduceBool]")),
    );
    expect(both).toEqual({
      found: true,
      reports: [
        { constant: "foo", axioms: ["propext"] },
        { constant: "Evil.foo", axioms: ["Lean.ofReduceBool"] },
      ],
    });
  });

  it("reports the theorem missing on an error, a REPL error or no report", () => {
    const error: ReplMessage = {
      severity: "error",
      pos: { line: 1, column: 14 },
      endPos: { line: 1, column: 17 },
      data: "Unknown constant `foo`",
    };
    expect(readAxiomsReports(answer(error))).toEqual({ found: false, detail: "Unknown constant `foo`" });
    expect(readAxiomsReports(answer(info("'foo' depends on axioms: [propext]"), error))).toMatchObject({ found: false });
    expect(readAxiomsReports({ kind: "error", response: { message: "Unknown environment." } })).toEqual({
      found: false,
      detail: "Unknown environment.",
    });
    expect(readAxiomsReports(answer(info("something else")))).toEqual({
      found: false,
      detail: "no axioms report in the answer to #print axioms",
    });
    expect(readAxiomsReports(answer())).toMatchObject({ found: false });
  });
});

describe("printAxiomsCommand", () => {
  it("asks by the _root_-qualified full name, which no open or later declaration redirects", () => {
    expect(printAxiomsCommand("foo")).toBe("#print axioms _root_.foo");
    expect(printAxiomsCommand("Bar.«my thm»")).toBe("#print axioms _root_.Bar.«my thm»");
  });
});

describe("isDeclaredConstant", () => {
  it("matches exactly the declared full name, ignoring «quotes», and its private form", () => {
    expect(isDeclaredConstant("foo", "foo")).toBe(true);
    expect(isDeclaredConstant("Bar.foo", "Bar.foo")).toBe(true);
    expect(isDeclaredConstant("my thm", "«my thm»")).toBe(true);
    expect(isDeclaredConstant("_private.Test.0.foo", "foo")).toBe(true);
    expect(isDeclaredConstant("Bar.foo", "foo")).toBe(false);
    expect(isDeclaredConstant("foo_aux", "foo")).toBe(false);
    expect(isDeclaredConstant("Barfoo", "foo")).toBe(false);
  });
});
