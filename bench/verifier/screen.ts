// The verdict's first tier alone: how long the token screen takes per proof, over the
// honest corpus of the verifier's tests (41 Mathlib-style proofs) and the same bodies
// repeated 20 times (long proofs), on the environment-like table the REPL stand-in
// reports and on the built-in fallback. The REPL and the replay are not in it: they are
// Lean's time (README, "Lean verifier").
//   npx tsx bench/verifier/screen.ts
import { readFileSync } from "node:fs";
import { BUILTIN_TABLE, makeTokenTable } from "@lean-grpo/lean";
import { prepareProof, theoremTarget } from "@lean-grpo/verifier";
import { DEFAULT_TOKEN_TABLE } from "../../tests/fakes/lean-repl/token-table.js";

const corpus = readFileSync(new URL("../../services/verifier/test/fixtures/honest-mathlib-proofs.jsonl", import.meta.url), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as { statement: string; proof: string });
const environment = makeTokenTable(DEFAULT_TOKEN_TABLE.tokens, DEFAULT_TOKEN_TABLE.commands, "environment");

function perProofMs(table: typeof BUILTIN_TABLE, repeat: number): { ms: number; passed: number } {
  const targets = corpus.map((r) => theoremTarget({ name: "", statement: r.statement, context: "", imports: [], header: "" }, ""));
  const bodies = corpus.map((r) => Array.from({ length: repeat }, () => r.proof.replace(/^by\n?/u, "")).join("\n  "));
  let passed = 0;
  const rounds = 20;
  const started = performance.now();
  for (let round = 0; round < rounds; round++) {
    bodies.forEach((body, i) => {
      if (prepareProof(targets[i]!, `by\n  ${body}`, table).ok) passed++;
    });
  }
  return { ms: (performance.now() - started) / (rounds * corpus.length), passed: passed / rounds };
}

console.log("table        body          ms/proof  passed");
for (const [name, table] of [
  ["environment", environment],
  ["built-in", BUILTIN_TABLE],
] as const) {
  for (const repeat of [1, 20]) {
    const { ms, passed } = perProofMs(table, repeat);
    // Repeated bodies are not proofs any more (a term twice); only the 1x row's pass count means anything.
    const shown = repeat === 1 ? `${passed}/${corpus.length}` : "-";
    console.log(`${name.padEnd(12)} ${`${repeat}x`.padEnd(12)} ${ms.toFixed(3).padStart(9)}  ${shown}`);
  }
}
