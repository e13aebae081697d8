import { describe, expect, it } from "vitest";
import { parseAnswerShape } from "../src/math/answer-structure.js";
import { parseExactNumber } from "../src/math/exact-number.js";
import { extractLastBoxed } from "../src/math/extract-boxed.js";
import { judgeMathAnswer } from "../src/math/math-verdict.js";
import { normalizeAnswer } from "../src/math/normalize-answer.js";
import { parseSymbolic } from "../src/math/symbolic-value.js";

describe("extractLastBoxed", () => {
  it("takes the last box with its nested braces", () => {
    expect(extractLastBoxed("\\boxed{1} and \\boxed{\\frac{a}{\\sqrt{b}}} end")).toEqual({
      kind: "found",
      content: "\\frac{a}{\\sqrt{b}}",
    });
  });
  it("does not count escaped braces as grouping", () => {
    expect(extractLastBoxed("\\boxed{\\{1, 2\\}}")).toEqual({ kind: "found", content: "\\{1, 2\\}" });
    expect(extractLastBoxed("\\boxed{\\}}")).toEqual({ kind: "found", content: "\\}" });
  });
  it("tells a missing box from an unclosed one", () => {
    expect(extractLastBoxed("the answer is 4")).toEqual({ kind: "none" });
    expect(extractLastBoxed("\\boxed{4} then \\boxed{5")).toEqual({ kind: "unclosed" });
  });
  it("reads \\fbox and a space before the brace", () => {
    expect(extractLastBoxed("\\fbox {7}")).toEqual({ kind: "found", content: "7" });
  });
});

describe("normalizeAnswer", () => {
  it.each([
    ["\\dfrac{1}{2}", "\\frac{1}{2}"],
    ["\\left( 1, 2 \\right)", "(1,2)"],
    ["x = \\frac{3}{4}", "\\frac{3}{4}"],
    ["1,234,567", "1234567"],
    ["1{,}000", "1000"],
    ["5\\text{ meters}", "5"],
    ["\\text{east}", "east"],
    ["$\\pi r$", "\\pi r"],
    ["90^{\\circ}", "90"],
    ["3 1/2", "3\\frac{1}{2}"],
    ["\\displaystyle\\frac{a}{b}\\,.", "\\frac{a}{b}"],
  ])("%s -> %s", (raw, expected) => {
    expect(normalizeAnswer(raw)).toBe(expected);
  });
  it("keeps an equation with two equals signs whole", () => {
    expect(normalizeAnswer("x = y = 2")).toBe("x=y=2");
  });
});

describe("parseExactNumber", () => {
  const value = (latex: string) => {
    const n = parseExactNumber(latex);
    return n && `${n.value.num}/${n.value.den}${n.percent ? "%" : ""}`;
  };
  it.each([
    ["42", "42/1"],
    ["-0.125", "-1/8"],
    ["\\frac{6}{-8}", "-3/4"],
    ["-2\\frac{1}{3}", "-7/3"],
    ["12.5%", "25/2%"],
    ["2.5e-3", "1/400"],
    ["10^{-3}", "1/1000"],
    ["2^{10}", "1024/1"],
  ])("%s is %s", (latex, expected) => {
    expect(value(latex)).toBe(expected);
  });
  it.each(["\\frac{1}{0}", "1e999", "x", "\\sqrt{4}", "0^{-1}"])("%s is not a plain number", (latex) => {
    expect(parseExactNumber(latex)).toBeUndefined();
  });
});

describe("parseAnswerShape", () => {
  it("reads unions, sets, bracketed lists and ± pairs", () => {
    expect(parseAnswerShape("(1,2)\\cup[3,4]")).toMatchObject({
      kind: "collection",
      of: "union",
      items: [{ kind: "bracketed" }, { kind: "bracketed" }],
    });
    expect(parseAnswerShape("\\{1,(2,3)\\}")).toMatchObject({
      kind: "collection",
      of: "set",
      items: [{ kind: "scalar" }, { kind: "bracketed" }],
    });
    expect(parseAnswerShape("[0,1)")).toMatchObject({ kind: "bracketed", open: "[", close: ")" });
    expect(parseAnswerShape("2\\pm\\sqrt{3}")).toMatchObject({
      kind: "collection",
      items: [{ latex: "2+(\\sqrt{3})" }, { latex: "2-(\\sqrt{3})" }],
    });
    expect(parseAnswerShape("f(1,2)")).toMatchObject({ kind: "scalar" });
  });
  it("does not split inside a longer command name", () => {
    expect(parseAnswerShape("a\\pmod{3}")).toMatchObject({ kind: "scalar" });
  });
});

describe("judgeMathAnswer guards", () => {
  const options = { tolerance: 1e-9, maxAnswerChars: 40 };
  it("calls an over-long answer wrong without parsing it", () => {
    const verdict = judgeMathAnswer(`\\boxed{${"1+".repeat(30)}1}`, "31", options);
    expect(verdict).toMatchObject({ outcome: "wrong", detail: "boxed answer longer than 40 characters" });
  });
  it("does not evaluate sums, integrals or huge factorials, which could stall the service", () => {
    for (const latex of ["\\sum_{n=1}^{10^{9}} n", "\\int_0^1 x dx", "99999!", "\\lim_{x\\to 0} x"])
      expect(parseSymbolic(latex), latex).toBeUndefined();
    expect(parseSymbolic("170!")?.valueAt([]).re).toBeCloseTo(7.257415615307994e306, -292);
    expect(judgeMathAnswer("\\boxed{99999!}", "1", options).outcome).toBe("wrong");
  });
  it("accepts a boxed ground truth", () => {
    expect(judgeMathAnswer("\\boxed{0.75}", "\\boxed{\\frac{3}{4}}", options).outcome).toBe("correct");
  });
  it("compares irrational values within the relative tolerance only", () => {
    const loose = { ...options, tolerance: 1e-3 };
    expect(judgeMathAnswer("\\boxed{1.4142}", "\\sqrt{2}", loose).outcome).toBe("correct");
    expect(judgeMathAnswer("\\boxed{1.4142}", "\\sqrt{2}", options).outcome).toBe("wrong");
  });
  it("needs an expression to agree at sample points, not just one", () => {
    expect(judgeMathAnswer("\\boxed{x^2}", "x", options).outcome).toBe("wrong");
    expect(judgeMathAnswer("\\boxed{\\sqrt{x^2}}", "|x|", options).outcome).toBe("correct");
    expect(judgeMathAnswer("\\boxed{2x}", "2y", options).outcome).toBe("wrong");
  });
});
