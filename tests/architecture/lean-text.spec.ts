// Lean source text is read in one place, packages/lean (the lexer and what is built on
// its tokens: declarations, placeholder proofs, command starts). A regular expression
// over Lean source anywhere else in the product's code is a second reader that will
// disagree with Lean (and with the verifier) on some input. Files that parse Lean's
// *output* (REPL messages, `#print axioms` reports, comparator's stage lines) are not
// Lean source and are listed here by name.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { sourceFiles } from "./support/source-files.js";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");

/** What only Lean source holds: keywords, `:=`, tactic blocks, `#` commands, «» names. */
const LEAN_SYNTAX = /theorem|lemma|\bsorry|:=|#eval|#print|\\bby\\b|«|\bdef\b|\bimport\b|native_decide/u;

/** Parsers of Lean's output, not of Lean source. */
const LEAN_OUTPUT_READERS = new Set([
  "services/verifier/src/verdict/progress.ts",
  "services/verifier/src/verdict/axioms.ts",
  "services/verifier/src/replay/replay-outcome.ts",
]);

function regexLiterals(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isRegularExpressionLiteral(node)) found.push(node.text);
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "RegExp") {
      const first = node.arguments?.[0];
      if (first && ts.isStringLiteralLike(first)) found.push(first.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("Lean text is read only by packages/lean", () => {
  it("no service, app or other package holds a regular expression over Lean source", () => {
    const roots = ["services", "apps", "packages"].flatMap((top) =>
      readdirSync(path.join(root, top)).map((name) => path.join(root, top, name, "src")),
    );
    const files = roots
      .filter((dir) => !dir.includes(`${path.sep}packages${path.sep}lean${path.sep}`) && statSafe(dir))
      .flatMap(sourceFiles)
      .map((file) => path.relative(root, file));
    // The scan covers the product: the reward's proof extraction and the verifier's screen among it.
    expect(files).toEqual(
      expect.arrayContaining(["services/reward/src/lean/extract-proof.ts", "services/verifier/src/verdict/proof-source.ts"]),
    );
    const offenders = files
      .filter((file) => !LEAN_OUTPUT_READERS.has(file))
      .flatMap((file) =>
        regexLiterals(path.join(root, file))
          .filter((re) => LEAN_SYNTAX.test(re))
          .map((re) => `${file}: ${re}`),
      );
    expect(offenders).toEqual([]);
  });

  it("would notice one", () => {
    expect(LEAN_SYNTAX.test(String.raw`/\s*:=\s*(?:by\s+)?sorry\s*$/u`)).toBe(true);
    expect(LEAN_SYNTAX.test(String.raw`/^(?:theorem|lemma)\s+/`)).toBe(true);
    expect(LEAN_SYNTAX.test(String.raw`/\s+$/`)).toBe(false);
  });
});

function statSafe(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
