// The screen's time grows linearly with its text. For each shape that once made a rule
// superlinear — `aesop (add)(add)…` (a walk back over every earlier clause), brackets
// before declarations, many notations, many opens, braces in strings — the cost per KB
// at 64 KB must stay within 3× the cost per KB at 16 KB (linear: 1×; quadratic: 4×).
// Timings interleave the two sizes after a warm-up and take the fastest of several
// runs: load on a shared machine only ever adds time, so the fastest run is the one
// nearest the screen's own cost, and both sizes are measured alike.
import { describe, expect, it } from "vitest";
import { PRESUMED_TABLE, screenSourcePart, screenTheoremSource } from "../src/index.js";

const RUNS = 7;

/** `unit` repeated to `kb` KiB after `head`, then `tail` (within the 64 KiB a context or statement may hold). */
function fill(kb: number, unit: string, head = "", tail = ""): string {
  const room = Math.min(kb * 1024, 64 * 1024) - head.length - tail.length;
  return head + unit.repeat(Math.floor(room / unit.length)) + tail;
}

const SHAPES: Record<string, (kb: number) => () => unknown> = {
  "Aesop clauses before an unsafe rule phase": (kb) => {
    const proof = fill(kb, "(add)", "by aesop ", " (add unsafe apply trivial)");
    return () => screenSourcePart(proof, "proof", "t", PRESUMED_TABLE);
  },
  "tactic lines": (kb) => {
    const proof = fill(kb, "  simp [h, Nat.add_comm] at *\n", "by\n");
    return () => screenSourcePart(proof, "proof", "t", PRESUMED_TABLE);
  },
  "closing brackets before declaration keywords": (kb) => {
    const statement = fill(kb, "] theorem ", "theorem t : ");
    return () => screenTheoremSource({ context: "", statement });
  },
  "notations, each used after": (kb) => {
    const context = fill(kb, 'notation "⊕a" => 1\ndef y := ⊕a\n');
    return () => screenTheoremSource({ context, statement: "theorem t : True" });
  },
  "open … in before a term": (kb) => {
    const proof = fill(kb, "open Nat in ", "by exact ", "h");
    return () => screenSourcePart(proof, "proof", "t", PRESUMED_TABLE);
  },
  "attributes before a declaration": (kb) => {
    const context = fill(kb, "@[simp] ", "", "theorem x : True := trivial");
    return () => screenTheoremSource({ context, statement: "" });
  },
  "dotted names": (kb) => {
    const proof = fill(kb, "a.", "by exact ", "b");
    return () => screenSourcePart(proof, "proof", "t", PRESUMED_TABLE);
  },
  "open brackets": (kb) => {
    const proof = fill(kb, "(", "by exact ");
    return () => screenSourcePart(proof, "proof", "t", PRESUMED_TABLE);
  },
};

const fastest = (values: number[]) => Math.min(...values);

describe("the screen's time is linear in its text", () => {
  it.each(Object.keys(SHAPES))(
    "%s: cost per KB at 64 KB ≤ 3 × at 16 KB",
    (shape) => {
      const [small, large] = [SHAPES[shape]!(16), SHAPES[shape]!(64)];
      small();
      large();
      const times = { small: [] as number[], large: [] as number[] };
      for (let run = 0; run < RUNS; run++) {
        for (const [size, screen] of [
          ["small", small],
          ["large", large],
        ] as const) {
          const started = performance.now();
          screen();
          times[size].push(performance.now() - started);
        }
      }
      const [perKbSmall, perKbLarge] = [fastest(times.small) / 16, fastest(times.large) / 64];
      expect(perKbLarge, `${shape}: ${perKbSmall.toFixed(3)} ms/KB at 16 KB, ${perKbLarge.toFixed(3)} ms/KB at 64 KB`).toBeLessThanOrEqual(
        3 * perKbSmall,
      );
    },
    120_000,
  );
});
