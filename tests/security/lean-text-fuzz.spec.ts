// Splices commands that run code into every Lean field of a Verify request — the
// header, the context, the statement and the proof — most often right after a random
// lexical error (after which Lean's command loop reads on from inside the broken
// token), else where they stand as code, and sends each to a real verifier whose Lean
// workers are the REPL stand-in, which logs every request. Every case must be refused
// (INVALID_ARGUMENT naming the theorem's field; REJECTED for a proof), and no request
// that reached the stand-in may hold anything of any case.
//
// Seeded (FUZZ_SEED, default 42) and bounded (FUZZ_CASES, default 240; a few seconds): a
// failure names the seed, the case and the text, and
// `FUZZ_SEED=<seed> npx vitest run tests/security/lean-text-fuzz.spec.ts` replays it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { Verdict, VerdictTier } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { screenTheorem } from "@lean-grpo/lean";
import { SeededRandom } from "@lean-grpo/random";
import { HONEST_CONTEXTS, MARKER } from "./lean-text-attacks.js";
import { startLeanTextMesh, type LeanTextMesh } from "./lean-text-mesh.js";

const SEED = Number(process.env.FUZZ_SEED ?? 42);
const CASES = Number(process.env.FUZZ_CASES ?? 240);

/**
 * Lexical errors of every form Lean has, each an error whatever follows it in these
 * cases (the commands below hold no `'`, `»`, `-/` or `"#` that could close one).
 */
const LEXICAL_ERRORS = [
  "'ab'",
  "'\\q'",
  "'",
  '"\\q',
  '"\\x4g',
  '"\\u12z',
  '"a\\\n\n',
  "2_",
  "0x",
  "0b",
  "1e",
  "1e+",
  "2.x",
  "\t",
  "\r ",
  "«never closed",
  "/- never closed",
  "/-- never closed",
  'r#"never closed',
];

/** Commands that run code, change syntax or leave the declaration; each names the marker. */
const COMMANDS = [
  `#eval IO.println "${MARKER}"`,
  `#guard (unsafeBaseIO (IO.println "${MARKER}" *> pure true))`,
  `#print axioms ${MARKER}`,
  `#exit -- ${MARKER}`,
  `run_cmd Lean.logInfo "${MARKER}"`,
  `run_elab Lean.logInfo "${MARKER}"`,
  `run_meta Lean.logInfo "${MARKER}"`,
  `initialize IO.println "${MARKER}"`,
  `elab "${MARKER}" : term => pure default`,
  `macro "${MARKER}" : term => \`(1)`,
  `syntax "${MARKER}" : term`,
  `@[init] def ${MARKER} := 1`,
  `axiom ${MARKER} : False`,
  `set_option debug.skipKernelTC true in theorem ${MARKER} : False := trivial`,
  `open IO in #eval println "${MARKER}"`,
  `deriving instance Repr for Nat\n#eval "${MARKER}"`,
];

const SEPARATORS = ["\n", "\n\n", " ", "\n  "];

/** Where a command stands when no lexical error comes before it: as code, in brackets, after `in`, in a string Lean may read. */
const PLACEMENTS: ((command: string) => string)[] = [
  (command) => command,
  (command) => `(\n${command})`,
  (command) => `open Nat in\n${command}`,
  (command) => `"{${command}}"`,
];

/** Honest context text to put around the splice: none that could close a lexical error above. */
const HONEST = Object.values(HONEST_CONTEXTS).filter((text) => !/-\/|»|"#/u.test(text));

type Field = "header" | "context" | "statement" | "proof";

interface Case {
  field: Field;
  header: string;
  context: string;
  statement: string;
  proof: string;
}

class Splicer {
  private readonly random: SeededRandom;
  constructor(seed: number) {
    this.random = new SeededRandom(seed);
  }
  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random.next() * items.length)]!;
  }

  /** An error then a command (four times in five), else a command placed as code. */
  private hostile(): string {
    const command = this.pick(COMMANDS);
    if (this.random.next() < 0.8) return `${this.pick(LEXICAL_ERRORS)}${this.pick(SEPARATORS)}${command}`;
    return this.pick(PLACEMENTS)(command);
  }

  next(): Case {
    const honest: Case = { field: "proof", header: "import Mathlib", context: "", statement: "theorem t : True", proof: "by trivial" };
    const field = this.pick(["header", "context", "statement", "proof"] as const);
    const hostile = this.hostile();
    switch (field) {
      case "header":
        return { ...honest, field, header: `import Mathlib\n${hostile}` };
      case "context": {
        const before = this.random.next() < 0.5 ? `${this.pick(HONEST)}\n` : "";
        const after = this.random.next() < 0.5 ? `\n${this.pick(HONEST)}` : "";
        return { ...honest, field, context: `${before}${hostile}${after}` };
      }
      case "statement":
        return {
          ...honest,
          field,
          statement: this.pick([`theorem t : ${hostile}`, `theorem t : True\n${hostile}`, `theorem t (h : ${hostile}) : True`]),
        };
      case "proof":
        return { ...honest, field, proof: this.pick([`by simp ${hostile}`, `by\n  simp\n${hostile}`, `${hostile}`]) };
    }
  }
}

let mesh: LeanTextMesh;
beforeAll(async () => {
  mesh = await startLeanTextMesh();
}, 60_000);
afterAll(async () => {
  await mesh?.close();
});

describe(`Lean commands spliced into every field (seed ${SEED}, ${CASES} cases)`, () => {
  it("are all refused before Lean, and nothing of them reaches the REPL", async () => {
    const splicer = new Splicer(SEED);
    const fields = new Map<Field, number>();
    for (let index = 0; index < CASES; index++) {
      const spliced = splicer.next();
      const where = `case ${index} (FUZZ_SEED=${SEED}), ${spliced.field}: ${JSON.stringify(spliced[spliced.field])}`;
      fields.set(spliced.field, (fields.get(spliced.field) ?? 0) + 1);
      const theorem = { header: spliced.header, context: spliced.context, statement: spliced.statement, imports: [] };
      // The one screen every entry point runs: it refuses the theorem's own fields.
      if (spliced.field !== "proof") expect(screenTheorem(theorem), where).toMatchObject({ ok: false, field: spliced.field });
      try {
        const response = await mesh.verifier.verify({ theorem, proof: spliced.proof });
        expect(spliced.field, `${where}: answered ${Verdict[response.verdict]} (${response.reason})`).toBe("proof");
        expect(response, where).toMatchObject({ verdict: Verdict.REJECTED, decidedBy: VerdictTier.SCREEN });
      } catch (error) {
        if (!(error instanceof ConnectError)) throw error;
        expect(error.code, `${where}: ${error.rawMessage}`).toBe(Code.InvalidArgument);
        expect(error.rawMessage, where).toMatch(new RegExp(`^theorem\\.${spliced.field}: `));
      }
    }
    expect(mesh.replInputs().filter((input) => input.includes(MARKER))).toEqual([]);
    // The honest header reached Lean (the proofs' cases warmed it): the REPL was there to receive anything.
    expect(mesh.replInputs()).toContain("import Mathlib");
    expect(fields.size).toBe(CASES >= 40 ? 4 : fields.size);
  }, 120_000);
});
