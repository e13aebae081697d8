// Theorem contexts and statements that must never reach Lean, and honest contexts that
// must, shared by the screen's unit tests (packages/lean) and the attacks at every entry
// point that takes a theorem (tests/security/lean-text-entry-points.spec.ts). Every
// hostile text carries MARKER, so a test can tell whether any of it reached the REPL.

export const MARKER = "PWNED";

/** A command that runs a shell on the verifier's host while Lean elaborates it. */
const SHELL = `#eval IO.Process.output { cmd := "sh", args := #["-c", "echo ${MARKER}"] }`;

/** Contexts that run code on the host, or are one step from it: each refused, naming theorem.context. */
export const HOSTILE_CONTEXTS: Readonly<Record<string, string>> = {
  // The two shapes of the report: a lexical error before the command, and none at all.
  "a two-character char literal, then #eval": `def x := 'ab'\n\n${SHELL}`,
  "a bad string escape, then #eval": `def x := "\\q\n${SHELL} --"`,
  "open IO, then #guard of unsafeBaseIO": `open IO\n#guard (unsafeBaseIO ((Process.output {cmd := "sh", args := #["-c", "echo ${MARKER}"]}).toBaseIO >>= fun _ => pure true))`,
  "#guard of unsafeBaseIO with no lexical error": `#guard (unsafeBaseIO ((IO.Process.output {cmd := "${MARKER}"}).toBaseIO >>= fun _ => pure true))`,
  // Other lexical errors Lean reads on after.
  "an unterminated string, then #eval": `def x := "${MARKER}\n#eval IO.Process.exit 3`,
  "a string gap with a second newline": `def x := "a\\\n\n${SHELL} --"`,
  "a numeral with a trailing separator": `def x := 2_\n${SHELL}`,
  "an identifier after a decimal point": `def x := 2.${MARKER}\n${SHELL}`,
  "a tab": `def x :=\t1\n${SHELL}`,
  "a lone carriage return": `def x := 1\r${SHELL}`,
  "an unterminated identifier escape": `def «${MARKER} := 1\n${SHELL}`,
  // Commands that are not declarations, wherever they stand.
  "open … in #eval": `open Nat in ${SHELL}`,
  "a command inside brackets": `def x := (\n${SHELL})`,
  run_cmd: `run_cmd Lean.logInfo "${MARKER}"`,
  initialize: `initialize IO.println "${MARKER}"`,
  elab: `elab "${MARKER}" : term => pure (Lean.mkConst \`\`True)`,
  "local macro": `local macro "${MARKER}" : term => \`(1)`,
  "syntax and macro_rules": `syntax "${MARKER}" : term\nmacro_rules | \`(${MARKER}) => \`(1)`,
  "an attribute that registers code": `@[init] def ${MARKER} := 1`,
  "attribute implemented_by": `def f : Nat := 1\ndef ${MARKER} : Nat := 2\nattribute [implemented_by ${MARKER}] f`,
  "local notation expanding to a tactic that runs code": `local notation "${MARKER}" => by run_tac pure ()`,
  "a lemma whose proof runs code": `theorem h : True := by run_tac do IO.println "${MARKER}"`,
  "decreasing_by running code": `def f : Nat → Nat\n  | n => n\ndecreasing_by run_tac IO.println "${MARKER}"`,
  "native_decide over a definition that does IO": `def evil : Bool := unsafeBaseIO (do IO.println "${MARKER}"; pure true)\ntheorem h : evil = true := by native_decide`,
  "a namespace inside IO": `namespace IO\ndef ${MARKER} := Process.output`,
  "set_option that switches off the kernel": `set_option debug.skipKernelTC true\ntheorem ${MARKER} : False := sorry`,
  "a command Lean may read inside a string": `def s := "{${SHELL}}"`,
  "a notation atom that hides a command": `infixl:65 " ∘' " => Function.comp\ndef x := f ∘'"' + " ${SHELL} --"`,
  "a character Lean reads no token at, then a quote": `def x := 1\né'"' + " ${SHELL} --"`,
  "a character Lean reads no token at, digits, then a quote": `def x := 1\né2'"' + " ${SHELL} --"`,
  "deriving, then a macro": `deriving instance Repr for Nat\nmacro "${MARKER}" : term => \`(1)`,
  // An atom that begins with a symbol and ends in letters: Lean's token ends inside what the screen reads as a name.
  "a symbol-then-letters atom, then a quote": `notation "∘x" => (1 : Nat)\ndef y := ∘x'"'\n${SHELL} -- "`,
  "a symbol-then-letters atom, then a raw string": `notation "[FOO" => (1 : Nat)\ndef y := [FOOr"\\"\n${SHELL} -- "`,
  "a scoped atom an open brings in, then a quote": `open CategoryTheory.MonoidalCategory\ndef y := 𝟙_'"'\n${SHELL} -- "`,
  // A notation atom with a digit between its symbol and its letters: Lean reads the atom, then `'"'`, then the command.
  "an atom +1a, then a quote": `notation "+1a" => (0 : Nat)\ndef x : Nat := +1a'"'\n${SHELL}\n-- "`,
  "an atom ∘1x, then a quote": `notation "∘1x" => (0 : Nat)\ndef x : Nat := ∘1x'"'\n${SHELL}\n-- "`,
  "an atom ≤1x, then a quote": `notation "≤1x" => (0 : Nat)\ndef x : Nat := ≤1x'"'\n${SHELL}\n-- "`,
  "an infix atom +1a, then a quote": `infixl:65 " +1a " => HAdd.hAdd\ndef x : Nat := 1 +1a'"'\n${SHELL}\n-- "`,
  "an atom +1a, then a raw string": `notation "+1a" => (0 : Nat)\ndef x : Nat := +1ar"\\"\n${SHELL}\n-- "`,
  "unsafe in a bracket that looks like an Aesop clause": `def y := (add, unsafe (IO.Process.output {cmd := "${MARKER}"})).2`,
};

/** Statements that are more than one declaration head: each refused, naming theorem.statement. */
export const HOSTILE_STATEMENTS: Readonly<Record<string, string>> = {
  "a char literal, then #eval": `theorem t : 'ab' = 'a'\n\n${SHELL}`,
  "a second command": `theorem t : True\n${SHELL}`,
  "a body, then a command": `theorem t : True := trivial\n${SHELL}`,
  "a command hidden in a string": `theorem t : "{${SHELL}}".length = 0`,
  "a tactic that runs code in the type": `theorem t : (by run_tac IO.println "${MARKER}"; exact 1 : Nat) = 1`,
};

/** Contexts of honest datasets: declarations, namespaces, `open`, options, attributes and notation that runs no code. */
export const HONEST_CONTEXTS: Readonly<Record<string, string>> = {
  "a definition": "def double (n : Nat) : Nat := n + n",
  "namespaces, opens and a doc comment":
    "open Real Nat\nopen scoped BigOperators\nnamespace Foo\n/-- doc -/\n@[simp] def helper (n : ℕ) : ℕ := n + 1\nend Foo",
  lemmas: "theorem helper_pos (n : ℕ) : 0 < n + 1 := Nat.succ_pos n\nlemma l : True := by trivial",
  "a section with variables": "section\nvariable {α : Type*} [inst : Inhabited α] (x : α)\ninclude x\nomit x\nend",
  "a structure deriving instances": "universe u\nstructure Point (α : Type u) where\n  x : α\n  y : α\nderiving Repr, DecidableEq",
  "an inductive and a derived instance": "inductive Color | red | green\nderiving instance Inhabited for Color",
  "classes and instances": "class Foo (α : Type) where foo : α\ninstance : Foo Nat := ⟨0⟩\nclass inductive Bar | a",
  modifiers: "noncomputable section\nprivate def f := 1\nprotected theorem Foo.g : True := trivial\nend",
  "mutual definitions":
    "mutual\n  def even : Nat → Bool\n    | 0 => true\n    | n + 1 => odd n\n  def odd : Nat → Bool\n    | 0 => false\n    | n + 1 => even n\nend",
  notation: 'local notation "‖" x "‖" => abs x\nscoped notation:10000 n "!" => Nat.factorial n\ninfixl:65 " +ᵥ " => HAdd.hAdd',
  "more notation": 'notation:50 a " ≡ " b " [MOD " n "]" => Nat.ModEq n a b\nprefix:max "√" => Nat.sqrt\npostfix:max "⁺" => Nat.succ',
  options:
    "set_option maxHeartbeats 400000 in\ntheorem big : True := trivial\nset_option autoImplicit false\nset_option linter.unusedVariables false",
  attributes: "attribute [local simp] Nat.add_comm\nattribute [-simp] Nat.add_zero\n@[ext] structure S where x : Nat",
  "open … in a declaration": "open Nat in\ntheorem t2 : succ 0 = 1 := rfl",
  termination: "def f (n : Nat) : Nat := match n with\n  | 0 => 0\n  | n + 1 => f n\ntermination_by n\ndecreasing_by simp_wf; omega",
  "a string with braces": 'def greeting : String := "hello {name}"',
};
