// Honest Lean passes the screen: the shipped examples, the verifier's honest Mathlib
// corpus, the dataset headers of the public benchmarks, and the REPL's own test inputs
// (tests/fakes/lean-repl/transcripts, toolchain v4.33.0-rc2) read as contexts — those
// refused are refused for what they really hold (a sorry, an import, a #command, ...).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DEFAULT_TOKEN_TABLE } from "../../../tests/fakes/lean-repl/token-table.js";
import { HONEST_HEADERS } from "../../../tests/security/header-attacks.js";
import { HONEST_CONTEXTS } from "../../../tests/security/lean-text-attacks.js";
import { declaredTheoremName, makeTokenTable, screenSourcePart, screenTheorem, screenTheoremSource } from "../src/index.js";
import { replQueries, TRANSCRIPTS } from "./support/repl-transcripts.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
/** The table the REPL stand-in reports for a Mathlib header, as the verifier reads it from Lean. */
const mathlib = makeTokenTable(DEFAULT_TOKEN_TABLE.tokens, DEFAULT_TOKEN_TABLE.commands, "environment");

interface LeanRecord {
  name?: string;
  id?: string;
  statement?: string;
  formal_statement?: string;
  context?: string;
  header?: string;
  imports?: string[];
  proof?: string;
}

const records = (path: string): LeanRecord[] =>
  readFileSync(join(ROOT, path), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as LeanRecord);

const theoremOf = (record: LeanRecord) => ({
  header: record.header ?? "",
  imports: record.imports ?? [],
  context: record.context ?? "",
  statement: record.statement ?? record.formal_statement ?? "",
});

describe("the shipped examples and the honest Mathlib corpus", () => {
  const corpora = [
    "examples/lean-basics.jsonl",
    "examples/lean-proofs.jsonl",
    "examples/minif2f-style.jsonl",
    "services/verifier/test/fixtures/honest-mathlib-proofs.jsonl",
  ];

  it.each(corpora)("every theorem of %s passes the theorem screen on the fallback table", (path) => {
    const refused = records(path).flatMap((record) => {
      const screen = screenTheorem(theoremOf(record));
      return screen.ok ? [] : [`${record.name ?? record.id}: ${screen.field}: ${screen.reason}`];
    });
    expect(refused).toEqual([]);
  });

  it.each(corpora)("every honest proof of %s passes the proof screen on the header's table; the examples' bad ones do not", (path) => {
    for (const record of records(path).filter((r) => r.proof !== undefined)) {
      const name = declaredTheoremName(theoremOf(record).statement) ?? "";
      const refusal = screenSourcePart(record.proof!, "proof", name, mathlib);
      expect(refusal === undefined, `${record.name ?? record.id}: ${refusal?.reason}`).toBe(!(record.id ?? "").startsWith("bad_"));
    }
  });
});

describe("honest headers and contexts", () => {
  it.each(Object.entries(HONEST_HEADERS))("the header %s", (_name, header) => {
    expect(screenTheorem({ header, imports: [], context: "", statement: "theorem t : True" })).toEqual({ ok: true });
  });

  it.each(Object.entries(HONEST_CONTEXTS))("the context %s, on both tables", (_name, context) => {
    for (const table of [undefined, mathlib]) {
      expect(screenTheoremSource({ context, statement: "theorem t : True" }, table)).toEqual({ ok: true });
    }
  });
});

describe("the REPL's own test inputs, read as contexts", () => {
  const files = [...readdirSync(TRANSCRIPTS), ...readdirSync(join(TRANSCRIPTS, "mathlib")).map((f) => join("mathlib", f))];
  const texts = files.flatMap((file) => {
    if (file.endsWith(".lean")) return [readFileSync(join(TRANSCRIPTS, file), "utf8")];
    if (!file.endsWith(".in")) return [];
    return replQueries(readFileSync(join(TRANSCRIPTS, file), "utf8")).flatMap((query) => (JSON.parse(query) as { cmd?: string }).cmd ?? []);
  });

  /** What the REPL's tests hold that a theorem's context may not, as the screen names it. */
  const REFUSABLE =
    /^(banned `(sorry|import|unsafe|exact\?|#print)`|banned library search \(`exact\?`\)|`#check` |banned set_option \(not allowed in a theorem\) \(`set_option trace\.|banned metaprogramming namespace opened \(`open Lean)/u;

  it("accepts the declarations, namespaces, opens and notation, and refuses only what they hold that a context may not", () => {
    let accepted = 0;
    for (const text of texts) {
      const screen = screenTheoremSource({ context: text, statement: "" }, mathlib);
      if (screen.ok) accepted++;
      else expect(screen.reason, text).toMatch(REFUSABLE);
    }
    expect(texts.length).toBeGreaterThan(100);
    expect(accepted).toBeGreaterThan(40);
  });
});
