import { describe, expect, it } from "vitest";
import { comparePositions, endPosition, positionAt } from "./source-position.js";

describe("positions", () => {
  it("counts lines from 1 and columns from 0 in code points, as the REPL does", () => {
    const text = "theorem t : ∀ x : 𝔽, x = x := by\n  intro x\n  rfl";
    expect(positionAt(text, text.indexOf("intro"))).toEqual({ line: 2, column: 2 });
    // 𝔽 is two UTF-16 units but one code point.
    expect(positionAt(text, text.indexOf(", x"))).toEqual({ line: 1, column: 19 });
    expect(endPosition(text)).toEqual({ line: 3, column: 5 });
    expect(endPosition("")).toEqual({ line: 1, column: 0 });
  });

  it("orders positions by line, then column", () => {
    expect(comparePositions({ line: 1, column: 9 }, { line: 2, column: 0 })).toBeLessThan(0);
    expect(comparePositions({ line: 2, column: 3 }, { line: 2, column: 1 })).toBeGreaterThan(0);
    expect(comparePositions({ line: 2, column: 3 }, { line: 2, column: 3 })).toBe(0);
  });
});
