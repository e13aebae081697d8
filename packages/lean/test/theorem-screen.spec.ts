// The theorem screen against what Lean's command loop would do with the text. Lean
// reads a command at a time; after a parse error it skips token by token to the
// next token that begins a command, and after a lexical error it reads on from
// inside the broken token (Lean/Parser/Module.lean, parseCommand and consumeInput).
// `commandsLeanReads` models that second case with the lexer's own resynchronising
// reader: each attack below is a command Lean reads, where the tokens the lexer got
// before its first error hold none — the gap the screen closes by refusing the text.
import { describe, expect, it } from "vitest";
import {
  BUILTIN_COMMAND_TOKENS,
  BUILTIN_TABLE,
  PRESUMED_TABLE,
  BUILTIN_TOKENS,
  CONTEXT_COMMANDS,
  commandStartedBy,
  makeTokenTable,
  screenSourcePart,
  screenTheorem,
  screenTheoremSource,
  tokenize,
  tokensResynchronised,
  type TokenTable,
} from "../src/index.js";

/** Every command Lean can start in `text`: at each command token, reading on after a lexical error from where it stopped. */
const commandsLeanReads = (text: string, table: TokenTable = BUILTIN_TABLE) =>
  tokensResynchronised(text, { tokens: table }).flatMap((token) => commandStartedBy(token, table) ?? []);

/** The commands in what the lexer read before its first error. */
const commandsBeforeError = (text: string) => tokenize(text).tokens.flatMap((token) => commandStartedBy(token) ?? []);

const theorem = (fields: { context?: string; statement?: string; header?: string }) => ({
  header: "",
  imports: [],
  context: "",
  statement: "theorem t : True",
  ...fields,
});

/** A Mathlib-like environment's table: `#` alone is a token (`#s`), and the quote-ended notations are tokens. */
const mathlibLike = makeTokenTable([...BUILTIN_TOKENS, "#", "my_command"], [...BUILTIN_COMMAND_TOKENS, "my_command"], "environment");

const EVAL = '#eval IO.Process.output { cmd := "sh", args := #["-c", "id"] }';
/** A command that runs IO, with no quote of its own (so the payloads' quotes pair as written). */
const HOSTILE = "#eval IO.Process.exit 3";

/** A lexical error of each of Lean's lexical forms, each followed by a command Lean reads after it (checked below). */
const LEXICAL_ERRORS: Record<string, string> = {
  "a character literal of two characters": `def x := 'ab'\n\n${HOSTILE}`,
  "a character literal with a bad escape": `def x := '\\q'\n${HOSTILE}`,
  "a character literal never closed": `def x := 'a\n${HOSTILE}`,
  "a string escape Lean does not know": `def x := "\\q\n${HOSTILE} --"`,
  "a short hexadecimal escape": `def x := "\\x4\n${HOSTILE} --"`,
  "a string never closed": `def x := "never closed\n${HOSTILE}`,
  "a string gap with a second newline": `def x := "a\\\n\n${HOSTILE} --"`,
  "a raw string never closed": `def x := r#"never closed"\n${HOSTILE}`,
  "an identifier escape never closed": `def «x := 1\n${HOSTILE}`,
  "a numeral with a trailing separator": `def x := 2_\n${HOSTILE}`,
  "a hexadecimal numeral without digits": `def x := 0x\n${HOSTILE}`,
  "an exponent without digits": `def x := 1e\n${HOSTILE}`,
  "an identifier after a bare decimal point": `def x := 2.foo\n${HOSTILE}`,
  "a tab": `def x :=\t1\n${HOSTILE}`,
  "a lone carriage return": `def x := 1\r${HOSTILE}`,
};

describe("a lexical error anywhere refuses the field, since Lean reads on after it", () => {
  it.each(Object.entries(LEXICAL_ERRORS))("%s: Lean reads the command; the screen refuses the context", (_what, context) => {
    expect(tokenize(context).error, context).toBeDefined();
    expect(commandsLeanReads(context)).toContain("#eval");
    const screen = screenTheorem(theorem({ context }));
    expect(screen).toMatchObject({ ok: false, field: "context", reason: expect.stringMatching(/^the context does not lex as Lean: /) });
  });

  it("the attack of a context that lexes up to the error: its command is invisible to the lexer's first reading", () => {
    const context = LEXICAL_ERRORS["a character literal of two characters"]!;
    expect(commandsBeforeError(context)).toEqual(["def"]);
    expect(screenTheorem(theorem({ context }))).toEqual({
      ok: false,
      field: "context",
      reason: "the context does not lex as Lean: missing end of character literal at context 1:11",
    });
  });

  it.each(Object.entries(LEXICAL_ERRORS))("%s in the statement refuses the statement", (_what, context) => {
    const statement = `theorem t : ${context.replace(/^def x := /u, "")}`;
    expect(screenTheorem(theorem({ statement }))).toMatchObject({ ok: false, field: "statement" });
  });

  it("refuses a comment that never closes too, though Lean then reads nothing after it", () => {
    for (const context of [`def x := 1 /- a /- b -/\n${HOSTILE}`, `/-- doc\n${HOSTILE}`]) {
      expect(commandsLeanReads(context)).not.toContain("#eval");
      expect(screenTheorem(theorem({ context }))).toMatchObject({ ok: false, reason: expect.stringContaining("unterminated comment") });
    }
  });

  it("reports an unterminated comment where it opens", () => {
    expect(screenTheoremSource({ context: "def x := 1\n/- open", statement: "" })).toEqual({
      ok: false,
      field: "context",
      reason: "the context does not lex as Lean: unterminated comment at context 2:0",
    });
  });
});

describe("the context holds only the commands on its list", () => {
  // The honest contexts (tests/security/lean-text-attacks.ts) pass: honest-corpora.spec.ts.

  it("lists every command it allows, and no command that runs code", () => {
    for (const command of ["#eval", "#guard", "#print", "run_cmd", "initialize", "elab", "macro", "syntax", "axiom", "opaque", "export"]) {
      expect(CONTEXT_COMMANDS.has(command), command).toBe(false);
    }
  });

  const REFUSED: [string, string, RegExp][] = [
    [
      "#guard with no lexical error",
      "open Nat\n#guard (unsafeBaseIO (pure true))",
      /^`#guard` at context 2:0 begins a command a context may not hold/,
    ],
    [
      "open IO, then #guard",
      'open IO\n#guard (unsafeBaseIO ((Process.output {cmd := "sh"}).toBaseIO >>= fun _ => pure true))',
      /^banned metaprogramming namespace opened \(`open IO`\) at context 1:0/,
    ],
    ["open … in #eval", 'open IO in #eval Process.output {cmd := "id"}', /^banned metaprogramming namespace opened/],
    ["a command after `in`", "open Nat in #check 1", /^`#check` at context 1:12 begins a command a context may not hold/],
    ["a command inside brackets, where a parse error leaves Lean", "def x := (\n#print axioms t)", /^banned `#print` at context 2:0/],
    ["a Mathlib command", "#find _ + 0", /^`#find` at context 1:0 begins a command/],
    ["run_cmd", "run_cmd pure ()", /^banned `run_cmd` at context 1:0/],
    ["run_elab", "run_elab pure ()", /^banned `run_elab`/],
    ["run_meta", "run_meta pure ()", /^banned `run_meta`/],
    ["initialize", "initialize pure ()", /^banned `initialize`/],
    ["builtin_initialize", "builtin_initialize pure ()", /^banned `builtin_initialize`/],
    ["elab", 'elab "x" : term => pure default', /^banned `elab`/],
    ["macro", 'local macro "x" : term => `(1)', /^banned `macro` at context 1:6/],
    ["macro_rules", "macro_rules | `(tactic| trivial) => `(tactic| rfl)", /^banned `macro_rules`/],
    ["syntax", 'syntax "x" : term', /^banned `syntax`/],
    [
      "declare_syntax_cat",
      "declare_syntax_cat foo",
      /^`declare_syntax_cat` at context 1:0 begins a command a context may not hold: it extends/,
    ],
    ["notation3", 'notation3 "x" => 1', /^`notation3` at context 1:0 begins a command/],
    ["axiom", "axiom cheat : False", /^banned `axiom`/],
    ["opaque", "opaque o : Nat", /^`opaque` at context 1:0 begins a command a context may not hold: it declares code/],
    ["unsafe def", "unsafe def f : Nat := 1", /^banned `unsafe`/],
    ["partial def", "partial def f : Nat → Nat := f", /^`partial` at context 1:0 begins a command/],
    ["export", "export Nat (succ)", /^`export` at context 1:0 begins a command/],
    ["import", "import Mathlib", /^banned `import`/],
    ["implemented_by", "@[implemented_by g] def f := 1", /^banned `implemented_by`/],
    ["extern", '@[extern "f"] def f := 1', /^banned `extern`/],
    ["an attribute that registers a tactic", "@[tactic simp] def t := 1", /^banned attribute \(not allowed\) \(`tactic`\)/],
    ["the attribute command with one", "attribute [init] f", /^banned attribute \(not allowed\) \(`init`\)/],
    ["set_option of an option not listed", "set_option debug.skipKernelTC true", /^banned set_option debug/],
    ["a tactic that runs code", "theorem h : True := by run_tac pure ()", /^banned `run_tac`/],
    ["decreasing_by with code", "def f : Nat → Nat\n  | n => n\ndecreasing_by run_tac pure ()", /^banned `run_tac`/],
    ["a do block", "def f : IO Unit := do\n  pure ()", /^banned /],
    ["native_decide", "theorem h : 2 + 2 = 4 := by native_decide", /^banned `native_decide`/],
    ["unsafeBaseIO in a definition", "def evil : Bool := unsafeBaseIO (pure true)", /^banned environment API \(`unsafeBaseIO`\)/],
    ["a namespace inside IO", "namespace IO\ndef run := Process.output", /^banned metaprogramming namespace opened/],
    ["notation whose expansion runs code", 'local notation "pwn" => by run_tac pure ()', /^banned `run_tac`/],
    ["a command hidden in a string Lean may read as code", 'def s := "{#guard true}"', /^`#guard` at context 1:11 .*inside a string/],
    ["the theorem's own name", "theorem t : True := trivial", /^banned redeclaring the theorem/],
    ["sorry", "def x : Nat := sorry", /^banned `sorry`/],
    [
      "deriving a handler's instance is allowed, a macro after it is not",
      'deriving instance Repr for Nat\nmacro "x" : term => `(1)',
      /^banned `macro` at context 2:0/,
    ],
  ];

  it.each(REFUSED)("refuses %s", (_what, context, reason) => {
    const screen = screenTheoremSource({ context, statement: "theorem t : True" });
    expect(screen.ok, context).toBe(false);
    expect(!screen.ok && screen.field).toBe("context");
    expect(!screen.ok && screen.reason, context).toMatch(reason);
  });

  it("names what a context may hold when it refuses a command", () => {
    const screen = screenTheoremSource({ context: "#guard true", statement: "" });
    expect(!screen.ok && screen.reason).toContain("a context holds only declarations (theorem, lemma, def");
  });

  it("reads commands with the header's token table where it is known: an environment's own command is refused", () => {
    expect(screenTheoremSource({ context: "my_command 1", statement: "" }, BUILTIN_TABLE)).toEqual({ ok: true });
    expect(screenTheoremSource({ context: "my_command 1", statement: "" }, mathlibLike)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^`my_command` at context 1:0 begins a command a context may not hold/),
    });
  });
});

describe("notation in a context: the screen reads its atoms as Lean does, and refuses those it cannot model", () => {
  it.each([
    ["a double quote", 'notation "a\\"b" => 1', "holds an escape"],
    ["a backtick", 'notation "`x" => 1', "holds `` ` ``"],
    ["a name escape", 'notation "«x" => 1', "holds `«`"],
    ["a brace", 'notation "{|" x "|}" => x', "holds `{`"],
    ["a hash", 'notation "#x" => 1', "holds `#`"],
    ["white space inside", 'notation "a b" => 1', "holds white space inside"],
    ["a raw string", 'notation r"x" => 1', "is a raw string"],
    ["a leading digit", 'infixl:65 " 1a " => HAdd.hAdd', "begins with a digit or a quote"],
  ])("refuses an atom with %s", (_what, context, problem) => {
    const screen = screenTheoremSource({ context, statement: "" });
    expect(!screen.ok && screen.reason, context).toContain(problem.replace("`` ` ``", "`"));
    expect(!screen.ok && screen.reason).toContain("the screen cannot read it the same way");
  });

  it.each([
    ["a quote", 'infixl:65 " +\' " => HAdd.hAdd', ""],
    ["a line comment opener", 'notation "a--" => 1', ""],
    ["a block comment opener", 'notation "~/-" => 1', ""],
    ["a trailing dash", 'infix:50 " ~- " => HAdd.hAdd', "def y := 1 ~- 2"],
    ["a trailing slash", 'infix:50 " ~/ " => HAdd.hAdd', "def y := 1 ~/ 2"],
    ["a trailing r after a symbol", 'prefix:max "∘r" => id', "def y := ∘r 1"],
  ])("declares an atom with %s, read as a token of the table from the next command on", (_what, declaration, use) => {
    expect(screenTheoremSource({ context: `${declaration}\n${use}`, statement: "" })).toEqual({ ok: true });
  });

  it("refuses a use of an atom where Lean's reading with it and without it put a literal or comment differently", () => {
    // With `+'`, Lean reads `1 +' 2`; had the notation not elaborated, `' '` would be a character literal.
    const screen = screenTheoremSource({ context: `infixl:65 " +' " => HAdd.hAdd\ndef y := 1 +' 2`, statement: "" });
    expect(!screen.ok && screen.reason).toMatch(/^the context (reads differently at context 2:12|does not lex as Lean)/);
  });

  it.each([
    ["+1a'\"'", 'notation "+1a" => (0 : Nat)'],
    ["∘1x'\"'", 'notation "∘1x" => (0 : Nat)'],
    ["≤1x'\"'", 'notation "≤1x" => (0 : Nat)'],
    ["1 +1a'\"'", 'infixl:65 " +1a " => HAdd.hAdd'],
    ['+1ar"\\"', 'notation "+1a" => (0 : Nat)'],
    ['a-- "', 'notation "a-" => (0 : Nat)'],
  ])("refuses %j hiding a command after the context declares its atom", (use, declaration) => {
    const context = `${declaration}\ndef x : Nat := ${use}\n#eval IO.Process.output {cmd := "id"}\n-- "`;
    for (const table of [BUILTIN_TABLE, PRESUMED_TABLE, mathlibLike]) {
      expect(screenTheoremSource({ context, statement: "theorem t : True" }, table), context).toMatchObject({
        ok: false,
        field: "context",
      });
    }
  });

  it("shows why: with the atom `∘'` Lean reads a command where the lexer reads a character literal and a string", () => {
    const text = `x ∘'"' + " ${EVAL} --"`;
    const withAtom = makeTokenTable([...BUILTIN_TABLE.commandTokens, "∘'", "+"], BUILTIN_TABLE.commandTokens, "environment");
    expect(commandsLeanReads(text, makeTokenTable(["∘", "+"], BUILTIN_TABLE.commandTokens, "environment"))).toEqual([]);
    expect(commandsLeanReads(text, withAtom)).toContain("#eval");
  });

  it("accepts plain atoms, words and string values in the expansion", () => {
    const context = 'notation "𝔼[" X "]" => X\nnotation "foo" => "a \\"quoted\\" value"\ninfixr:35 " ×ₗ " => Prod';
    expect(screenTheoremSource({ context, statement: "" })).toEqual({ ok: true });
  });
});

describe("the statement is one declaration head", () => {
  it.each([
    "theorem t (n : ℕ) : n + 0 = n",
    "theorem t (n : ℕ) : n + 0 = n := by sorry",
    "theorem t : True := by",
    "lemma t {α : Type*} (f : α → α) (n : ℕ := 0) : f = f",
    "@[simp] private theorem t : 1 = 1",
    "/-- doc -/\ntheorem t : ∀ x : ℤ, |x| ≥ 0 -- trailing comment",
    'theorem t : ("{" ++ "}").length = 2',
  ])("accepts %j", (statement) => {
    expect(screenTheoremSource({ context: "", statement })).toEqual({ ok: true });
  });

  it.each([
    ["a second command", "theorem t : True\n#eval 1", /^banned `#eval` at statement 2:0/],
    ["a second declaration", "theorem t : True := trivial\ntheorem u : False", /^holds a body after `:=` at statement 1:17/],
    ["a body", "theorem t : True := trivial", /^holds a body after `:=`/],
    ["a where clause", "theorem t : True where", /^`where` at statement 1:17 belongs to a declaration's body/],
    ["an open before it", "open Nat in theorem t : True", /^does not begin with `theorem` or `lemma`/],
    ["an example", "example : True", /^does not begin with `theorem` or `lemma`/],
    ["no name", "theorem : True", /^names no theorem after `theorem`/],
    [
      "a command hidden in a string",
      'theorem t : "{#guard true}" = ""',
      /^`#guard` at statement 1:14 begins another command \(inside a string/,
    ],
    ["an environment's own command", "theorem t : True\nmy_command", /^`my_command` at statement 2:0 begins another command/],
    ["an attribute that registers code", "@[csimp] theorem t : True", /^banned `csimp`/],
  ])("refuses %s", (_what, statement, reason) => {
    const screen = screenTheoremSource({ context: "", statement }, mathlibLike);
    expect(screen).toMatchObject({ ok: false, field: "statement" });
    expect(!screen.ok && screen.reason).toMatch(reason);
  });
});

describe("the token table decides what a quote is", () => {
  it("on the fallback table refuses a quote whose reading depends on the imports; on the environment's table reads it as Lean does", () => {
    // Without `×'` in Lean's table, Lean reads `×` then the character literal `' '` then a string: the command is code.
    const statement = `theorem t (s : Nat × Nat) : s ×' '"' = 1 --"\n${EVAL}`;
    expect(commandsLeanReads(statement, makeTokenTable(["×", "(", ")", ":", "=", "#eval"], ["#eval"], "environment"))).toContain("#eval");
    expect(screenTheoremSource({ context: "", statement }, BUILTIN_TABLE)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^banned quote next to a symbol/),
    });
    // With `×'` a token, as in Mathlib, Lean reads what the lexer reads: the command is a second command of the statement.
    expect(screenTheoremSource({ context: "", statement }, mathlibLike)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/#eval/),
    });
  });

  it("reads Mathlib's `#s` as a card on the environment's table and by default, and as a command on the strict fallback", () => {
    const statement = "theorem t (s : Finset ℕ) : #s = 3";
    expect(screenTheoremSource({ context: "", statement }, mathlibLike)).toEqual({ ok: true });
    expect(screenTheoremSource({ context: "", statement })).toEqual({ ok: true });
    expect(screenTheoremSource({ context: "", statement }, BUILTIN_TABLE)).toMatchObject({ ok: false, field: "statement" });
    // The listed `#` commands are commands on every table.
    expect(screenTheoremSource({ context: "", statement: "theorem t : True\n#eval 1" })).toMatchObject({ ok: false });
  });

  it("refuses a quote glued to a symbol or a numeral on every table, where Lean may read a longer token or a name", () => {
    // After `é`, where no token begins, Lean's loop resumes one byte on, inside the character, and reads a name that takes in
    // `2'`: then `"' + "` is a string and the command after it is code, where the lexer reads a numeral, a character literal
    // and a string. A notation that a context's `open` brings into scope is a longer token the same way.
    const context = `def x := 1\né2'"' + " ${HOSTILE} --"`;
    expect(commandsBeforeError(context)).toEqual(["def"]);
    for (const table of [mathlibLike, BUILTIN_TABLE, undefined]) {
      expect(screenTheoremSource({ context, statement: "" }, table)).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/^banned quote next to a symbol \(`'"'`\) at context 2:2/),
      });
    }
    expect(screenTheoremSource({ context: "def c : Char := 'a'\ndef x := a ⧸ b", statement: "" }, mathlibLike)).toEqual({ ok: true });
  });

  it("accepts the usual quote-ended notations with space after them", () => {
    const statement = "theorem t {α β : Type*} (f : α → β) (s : Set α) : f '' s = f '' s ∧ f ⁻¹' (f '' s) ⊇ s ∧ ∑' i : ℕ, (0 : ℝ) = 0";
    expect(screenTheoremSource({ context: "", statement }, BUILTIN_TABLE)).toEqual({ ok: true });
  });
});

describe("screenTheorem", () => {
  it("screens the header first, then the statement, then the context, naming the field", () => {
    expect(screenTheorem(theorem({ header: "import Mathlib\n#eval 1", context: "#eval 2" }))).toMatchObject({ field: "header" });
    expect(screenTheorem({ ...theorem({ context: "#eval 2" }), imports: ["Lean\n#eval 1"] })).toMatchObject({ field: "imports" });
    expect(screenTheorem(theorem({ statement: "theorem t : True\n#eval 1", context: "#eval 2" }))).toMatchObject({ field: "statement" });
    expect(screenTheorem(theorem({ context: "#eval 2" }))).toMatchObject({ field: "context" });
  });

  it("passes a theorem with no Lean text (a math task) and reads CRLF as Lean does", () => {
    expect(screenTheorem(theorem({ statement: "" }))).toEqual({ ok: true });
    expect(screenTheorem(theorem({ context: 'def x := 1\r\ndef s := "a\\\r\n  b"\r\n' }))).toEqual({ ok: true });
  });
});

describe("where Lean's token ends inside what the screen reads as a name", () => {
  // An atom that begins with a symbol and ends in letters (`∘x`, `[FOO`), declared in the context or
  // brought into scope by an `open`, is no token in any table the screen reads: Lean reads `∘x` and
  // then `'"'` (a character) or `r"\"` (a raw string), where the lexer reads a name and then a string.
  const hostileContexts = [
    'notation "∘x" => (1 : Nat)\ndef y := ∘x\'"\'\n#eval IO.Process.exit 7 -- "',
    'notation "[FOO" => (1 : Nat)\ndef y := [FOOr"\\"\n#eval IO.Process.exit 7 -- "',
    "open CategoryTheory.MonoidalCategory\ndef y := 𝟙_'\"'\n#eval IO.Process.exit 7 -- \"",
  ];
  const hostileProofs = [
    "by\n  open CategoryTheory.MonoidalCategory in exact 𝟙_'\"'\n#eval IO.Process.exit 7 -- \"",
    'by exact ∘xr#"\\"#\n#eval IO.Process.exit 7 -- "',
  ];

  it.each(hostileContexts)("refuses the context %j on every table", (context) => {
    for (const table of [BUILTIN_TABLE, mathlibLike]) {
      const screened = screenTheoremSource({ context, statement: "theorem t : True" }, table);
      expect(screened).toMatchObject({ ok: false, field: "context" });
      expect((screened as { reason: string }).reason).toMatch(
        /a name glued to a symbol|reads differently|quote next to a symbol|banned `#eval`/,
      );
    }
  });

  it.each(hostileProofs)("refuses the proof %j", (proof) => {
    expect(screenSourcePart(proof, "proof", "t", mathlibLike)?.reason).toContain("a name glued to a symbol");
  });

  it("keeps honest names after symbols: primes, brackets, anonymous constructors, lists", () => {
    for (const proof of ["by exact ⟨h', h''⟩", "by simpa using (h₁' : ¬p')", "by exact [a', b'].length", "fun x => f⁻¹' s"]) {
      expect(screenSourcePart(proof, "proof", "t", mathlibLike), proof).toBeUndefined();
    }
  });
});

describe("Aesop's rule phase `unsafe`", () => {
  it("is allowed only in an `(add …)` clause of an aesop call", () => {
    for (const proof of [
      "by aesop (add unsafe 50% apply foo)",
      "by aesop (rule_sets := [Foo]) (add safe 1 foo, unsafe 2 bar)",
      "by aesop_cat (add unsafe apply bar)",
    ]) {
      expect(screenSourcePart(proof, "proof", "t", mathlibLike), proof).toBeUndefined();
    }
  });

  it("is the term `unsafe` in any other bracket that begins with add", () => {
    for (const proof of ["by exact (add, unsafe (ptrAddrUnsafe x)).2", "by exact (f (add unsafe x))", "by exact (add unsafe x)"]) {
      expect(screenSourcePart(proof, "proof", "t", mathlibLike)?.reason, proof).toContain("`unsafe`");
    }
  });
});
