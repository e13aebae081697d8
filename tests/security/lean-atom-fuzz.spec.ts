// Declares random notation atoms in a theorem's context — mixes of symbols, digits,
// letters, quotes, `r`, `'` and guillemets — and places a payload after each use of
// them, in the context, the statement or the proof: the atom, then what would open a
// character literal, a raw string, a string or a comment on a table without it, then
// a command that runs a shell, then a closing `"` in a comment. Each case goes through
// the theorem screen (the reward service's and the orchestrator's) and through Verify
// and Score to the real verifier, whose Lean workers are the REPL stand-in.
//
// The oracle is Lean's token function as the reference describes it (longest match
// over the table, literals first), read here with tokenize on a table made once with
// every atom the case declares and once without them: where either reading puts the
// command in code, every entry point must refuse the case (Lean holds a declared atom
// only where its notation elaborated). A case whose command both readings keep inside a
// literal or comment may pass: Lean reads no command there either.
//
// Seeded (FUZZ_SEED, default 51) and bounded (FUZZ_CASES, default 60): a failure names
// the seed, the case and the text; `FUZZ_SEED=<seed> FUZZ_CASES=<n> npx vitest run
// tests/security/lean-atom-fuzz.spec.ts` replays it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { BUILTIN_COMMAND_TOKENS, BUILTIN_TOKENS, makeTokenTable, screenTheorem, tokenize } from "@lean-grpo/lean";
import { SeededRandom } from "@lean-grpo/random";
import { MARKER } from "./lean-text-attacks.js";
import { startLeanTextMesh, type LeanTextMesh } from "./lean-text-mesh.js";

const SEED = Number(process.env.FUZZ_SEED ?? 51);
const CASES = Number(process.env.FUZZ_CASES ?? 60);

const SYMBOLS = ["+", "∘", "≤", "⊕", "~", "*", "^", "&", "|", "<", ">", "=", "×", "⋆", "≺", "⬝"];
const DIGITS = ["1", "2", "0"];
const LETTERS = ["a", "x", "r", "b", "ε"];
const QUOTES = ["'", '"', "«", "»"];
const DECLARATIONS = [
  (atom: string) => `notation "${atom}" => (0 : Nat)`,
  (atom: string) => `infixl:65 " ${atom} " => HAdd.hAdd`,
  (atom: string) => `prefix:max "${atom}" => Nat.succ`,
  (atom: string) => `local notation "${atom}" => (1 : Nat)`,
];
/** What follows the atom: on a table without it, each opens a literal or a comment that a command after it then sits in. */
const OPENERS = [`'"'`, `r"\\"`, `r#"\\"#`, `"`, "--", "/-", `'`, `1'"'`, `x'"'`];
const COMMAND = `#eval IO.Process.output { cmd := "sh", args := #["-c", "echo ${MARKER}"] }`;

interface Case {
  field: "context" | "statement" | "proof";
  atoms: string[];
  context: string;
  statement: string;
  proof: string;
}

class AtomFuzzer {
  private readonly random: SeededRandom;
  constructor(seed: number) {
    this.random = new SeededRandom(seed);
  }
  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random.next() * items.length)]!;
  }

  /** A symbol first (an atom Lean accepts), then one to four characters of any class; half the time the report's shape, digits then letters. */
  atom(): string {
    let atom = this.pick(SYMBOLS);
    if (this.random.next() < 0.5)
      return `${atom}${this.pick(DIGITS)}${this.pick(LETTERS)}${this.random.next() < 0.5 ? this.pick(LETTERS) : ""}`;
    const length = 1 + Math.floor(this.random.next() * 4);
    for (let i = 0; i < length; i++) atom += this.pick(this.pick([SYMBOLS, DIGITS, LETTERS, LETTERS, QUOTES]));
    return atom;
  }

  next(): Case {
    const atoms = [this.atom(), ...(this.random.next() < 0.3 ? [this.atom()] : [])];
    const declarations = atoms.map((atom) => this.pick(DECLARATIONS)(atom.replace(/"/g, '\\"')));
    const use = this.pick(atoms);
    const payload = `${use}${this.pick(OPENERS)}\n${COMMAND}\n-- "`;
    const field = this.pick(["context", "statement", "proof"] as const);
    const honest = { context: declarations.join("\n"), statement: "theorem t (n : Nat) : n = n", proof: "by rfl" };
    switch (field) {
      case "context":
        return { field, atoms, ...honest, context: `${honest.context}\ndef y := ${payload}` };
      case "statement":
        return { field, atoms, ...honest, statement: `theorem t (n : Nat) : n = ${payload}` };
      case "proof":
        return { field, atoms, ...honest, proof: `by\n  have h := ${payload}` };
    }
  }
}

/** Whether tokenize on `table` reads a `#eval` as code (not in a literal or comment) anywhere in `text`. */
function commandInCode(text: string, tokens: readonly string[]): boolean {
  const table = makeTokenTable([...BUILTIN_TOKENS, ...tokens], BUILTIN_COMMAND_TOKENS, "environment");
  return tokenize(text, { tokens: table }).tokens.some((token) => token.kind === "hashCommand" && token.text.startsWith("#eval"));
}

let mesh: LeanTextMesh;
beforeAll(async () => {
  mesh = await startLeanTextMesh();
}, 60_000);
afterAll(async () => {
  await mesh?.close();
});

describe(`notation atoms declared at random, payloads after them (seed ${SEED}, ${CASES} cases)`, () => {
  it("are refused at every entry point wherever Lean, with the atoms or without, reads the command as code", async () => {
    const fuzzer = new AtomFuzzer(SEED);
    const codeAt = new Map<number, boolean>();
    const outcomes = { refused: 0, accepted: 0 };
    for (let index = 0; index < CASES; index++) {
      const c = fuzzer.next();
      const where = `case ${index} (FUZZ_SEED=${SEED}), atoms ${JSON.stringify(c.atoms)}, ${c.field}: ${JSON.stringify(c[c.field])}`;
      // The whole text as Lean reads it: the context, the statement and the proof, with the atoms and without.
      const whole = `${c.context}\n${c.statement} := ${c.proof}`;
      const atomsTrimmed = c.atoms.map((atom) => atom.trim());
      const code = commandInCode(whole, atomsTrimmed) || commandInCode(whole, []);
      codeAt.set(index, code);
      const theorem = { id: `a${index}`, name: "", header: "import Mathlib", context: c.context, statement: c.statement, imports: [] };
      const screened = screenTheorem(theorem);
      const before = mesh.replInputs().length;
      let verdict: string;
      try {
        const response = await mesh.verifier.verify({ theorem: { ...theorem, kind: TaskKind.LEAN_PROOF }, proof: c.proof });
        verdict = Verdict[response.verdict];
      } catch (error) {
        const refused = ConnectError.from(error);
        expect(refused.code, `${where}: ${refused.rawMessage}`).toBe(Code.InvalidArgument);
        verdict = "INVALID_ARGUMENT";
      }
      // The reward service takes the proof out of a completion (it may stop at the command's line) and asks the verifier.
      await mesh.reward
        .score({
          theorem: { ...theorem, kind: TaskKind.LEAN_PROOF },
          completion: { text: `\`\`\`lean\n${c.statement} := ${c.proof}\n\`\`\``, tokenIds: [1] },
        })
        .catch((error: unknown) => expect(ConnectError.from(error).code, where).toBe(Code.InvalidArgument));
      if (code) {
        if (c.field !== "proof") expect(screened, `${where}: the theorem screen`).toMatchObject({ ok: false });
        expect(["REJECTED", "INVALID_ARGUMENT"], `${where}: Verify answered ${verdict}`).toContain(verdict);
        const reached = mesh
          .replInputs()
          .slice(before)
          .filter((input) => input.includes(MARKER));
        expect(reached, `${where}: reached the REPL`).toEqual([]);
      }
      if (verdict === "REJECTED" || verdict === "INVALID_ARGUMENT") outcomes.refused++;
      else outcomes.accepted++;
    }
    expect(outcomes.refused, JSON.stringify(outcomes)).toBeGreaterThan(0);
    expect([...codeAt.values()].filter(Boolean).length).toBeGreaterThan(CASES / 4);
  }, 300_000);
});
