// The screen's cost per KB of text, beside its baseline from the same run: the lexer
// alone (tokenize), which any screen must pay once. Shapes: honest tactic lines, the
// Aesop clauses that were once quadratic, and a context of notations each used after
// (read with and without its atoms). Sizes 16, 32 and 64 KiB; the fastest of several
// interleaved runs after a warm-up. A linear screen keeps its ms/KB flat across sizes.
//   npx tsx bench/verifier/screen-cost.ts [RUNS]
import { PRESUMED_TABLE, screenSourcePart, screenTheoremSource, tokenize } from "@lean-grpo/lean";

const RUNS = Number(process.argv[2] ?? 7);
const SIZES_KB = [16, 32, 64];

function fill(kb: number, unit: string, head = "", tail = ""): string {
  const room = Math.min(kb * 1024, 64 * 1024) - head.length - tail.length;
  return head + unit.repeat(Math.floor(room / unit.length)) + tail;
}

const SHAPES: Record<string, { text: (kb: number) => string; screen: (text: string) => unknown }> = {
  "tactic lines (proof)": {
    text: (kb) => fill(kb, "  simp [h, Nat.add_comm] at *\n", "by\n"),
    screen: (text) => screenSourcePart(text, "proof", "t", PRESUMED_TABLE),
  },
  "aesop (add)… (proof)": {
    text: (kb) => fill(kb, "(add)", "by aesop ", " (add unsafe apply trivial)"),
    screen: (text) => screenSourcePart(text, "proof", "t", PRESUMED_TABLE),
  },
  "notations, each used (context)": {
    text: (kb) => fill(kb, 'notation "⊕a" => 1\ndef y := ⊕a\n'),
    screen: (text) => screenTheoremSource({ context: text, statement: "theorem t : True" }),
  },
};

function fastestMs(run: () => unknown): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    run();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

const rows = [];
for (const [shape, { text, screen }] of Object.entries(SHAPES)) {
  for (const kb of SIZES_KB) {
    const source = text(kb);
    const size = source.length / 1024;
    screen(source);
    tokenize(source, { tokens: PRESUMED_TABLE });
    const screenMs = fastestMs(() => screen(source));
    const lexMs = fastestMs(() => tokenize(source, { tokens: PRESUMED_TABLE }));
    rows.push({
      shape,
      kb: Number(size.toFixed(1)),
      screenMsPerKb: Number((screenMs / size).toFixed(3)),
      lexerMsPerKb: Number((lexMs / size).toFixed(3)),
      ratio: Number((screenMs / lexMs).toFixed(2)),
    });
  }
}
const [load] = (await import("node:os")).loadavg();
console.log(JSON.stringify({ runs: RUNS, loadAverage1m: Number(load!.toFixed(2)), rows }, null, 2));
