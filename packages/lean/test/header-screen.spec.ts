import { describe, expect, it } from "vitest";
import { HONEST_HEADERS, HOSTILE_HEADERS } from "../../../tests/security/header-attacks.js";
import { MAX_HEADER_CHARS, screenHeader } from "../src/index.js";

describe("screenHeader", () => {
  it.each(Object.entries(HONEST_HEADERS))("accepts an honest header: %s", (_name, header) => {
    expect(screenHeader(header)).toEqual({ ok: true });
  });

  it.each(Object.entries(HOSTILE_HEADERS))("refuses %s", (_name, header) => {
    const screen = screenHeader(header);
    expect(screen.ok).toBe(false);
    if (!screen.ok) expect(screen.reason).toMatch(/^line \d+ .*; a header may hold only `import Module` lines/);
  });

  it("names the line and the token it refuses", () => {
    expect(screenHeader("import Mathlib\n\n#eval IO.Process.output {}")).toMatchObject({
      reason: expect.stringMatching(/^line 3 holds `#eval`/),
    });
    expect(screenHeader("import Mathlib\nset_option debug.skipKernelTC true")).toMatchObject({
      reason: expect.stringMatching(/^line 2 sets the option `debug.skipKernelTC`, which a header may not set/),
    });
    expect(screenHeader("open X in #eval 1")).toMatchObject({ reason: expect.stringMatching(/^line 1 holds `in`/) });
    expect(screenHeader("set_option maxHeartbeats 0x10")).toMatchObject({ reason: expect.stringContaining("it takes a decimal number") });
  });

  it("refuses opening IO's or Lean's namespaces, whose members would then answer to short names everywhere after", () => {
    for (const header of [
      "import Mathlib\nopen IO",
      "open Nat Lean.Elab",
      "open scoped Lean",
      "open _root_.IO.Process",
      "open «System»",
      "open Real\topen IO",
    ]) {
      const screen = screenHeader(header);
      expect(screen.ok, header).toBe(false);
    }
    expect(screenHeader("import Mathlib\nopen Nat IO")).toMatchObject({
      reason: expect.stringMatching(/^line 2 opens `IO`, whose members/),
    });
    expect(screenHeader("open Real Nat Topology Lean_aux")).toEqual({ ok: true });
  });

  it("refuses a header that does not lex as Lean (a tab, a lone carriage return)", () => {
    expect(screenHeader("import Mathlib\n\topen Real")).toMatchObject({
      reason: expect.stringContaining("does not lex (tabs are not allowed"),
    });
    expect(screenHeader("import Mathlib\ropen Real")).toMatchObject({ reason: expect.stringContaining("isolated carriage returns") });
  });

  it("refuses an oversized header before lexing it", () => {
    const header = `import Mathlib\n${"-- padding\n".repeat(MAX_HEADER_CHARS / 10)}`;
    expect(screenHeader(header)).toEqual({
      ok: false,
      reason: `is ${header.length} characters long; at most ${MAX_HEADER_CHARS} are accepted`,
    });
  });
});
