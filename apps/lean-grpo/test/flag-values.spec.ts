// The CLI's numeric flags: accepted values parse; anything else names the flag, the text and what is accepted.
import { describe, expect, it } from "vitest";
import { nonNegativeInteger, nonNegativeNumber, positiveInteger, positiveNumber } from "../src/commands/flag-values.js";

describe("flag values", () => {
  it("parses what each accepts", () => {
    expect(positiveInteger("--k", "4")).toBe(4);
    expect(nonNegativeInteger("--seed", "0")).toBe(0);
    expect(positiveNumber("--lr", "3e-3")).toBe(0.003);
    expect(nonNegativeNumber("--temperature", "0")).toBe(0);
  });

  it("refuses the rest, naming flag, text and what is accepted", () => {
    expect(() => positiveInteger("--k", "0")).toThrow('--k is "0"; it must be an integer >= 1');
    expect(() => positiveInteger("--k", "1.5")).toThrow('--k is "1.5"; it must be an integer >= 1');
    expect(() => nonNegativeInteger("--seed", "-1")).toThrow('--seed is "-1"; it must be an integer >= 0');
    expect(() => nonNegativeInteger("--seed", "abc")).toThrow('--seed is "abc"; it must be an integer >= 0');
    expect(() => positiveNumber("--lr", "0")).toThrow('--lr is "0"; it must be a positive number');
    expect(() => positiveNumber("--lr", "Infinity")).toThrow('--lr is "Infinity"; it must be a positive number');
    expect(() => nonNegativeNumber("--temperature", "-0.5")).toThrow('--temperature is "-0.5"; it must be a number >= 0');
  });
});
