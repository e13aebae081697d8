// Whole-file proofs of one theorem: honest files (auxiliary lemmas, then the theorem with
// the dataset's statement) that must verify, and the attacks a whole file opens, each
// refused before Lean with the reason that names its rule. Shared by the screen's unit
// tests (packages/lean), the verifier's and reward service's entry points and a training
// run (tests/security/whole-file-entry-points.spec.ts). Every hostile file carries MARKER,
// so a test can tell whether any of it reached the REPL.

export const MARKER = "PWNED";

export const WHOLE_FILE_THEOREM = {
  name: "add_zero_wf",
  statement: "theorem add_zero_wf (n : Nat) : n + 0 = n",
  header: "import Mathlib",
};

const MAIN = `${WHOLE_FILE_THEOREM.statement} := by\n  exact aux_wf n`;
const AUX = "lemma aux_wf (n : Nat) : n + 0 = n := by simp";

/** Files that must pass the screen and verify. */
export const HONEST_WHOLE_FILES: Readonly<Record<string, string>> = {
  "a lemma, then the theorem (the issue's example)": `${AUX}\n\n${MAIN}`,
  "the imports the header has, a doc comment, and `lemma` for the theorem": `import Mathlib\n\n/-- helper -/\n${AUX}\n\n/-- the theorem -/\nlemma add_zero_wf (n : Nat) :\n    n + 0 = n := by\n  exact aux_wf n`,
  "a def and a simp lemma about it": `def twice_wf (n : Nat) : Nat := n + n\n\n@[simp] theorem twice_wf_eq (n : Nat) : twice_wf n = 2 * n := by\n  unfold twice_wf; omega\n\n${WHOLE_FILE_THEOREM.statement} := by simp`,
  "no auxiliary at all": `${WHOLE_FILE_THEOREM.statement} := by simp`,
  "open … in inside the proofs, as a tactic": `lemma aux_wf (n : Nat) : n + 0 = n := by\n  open Classical in\n  simp\n\n${WHOLE_FILE_THEOREM.statement} := by\n  set_option maxRecDepth 1000 in\n  exact aux_wf n`,
};

export interface WholeFileAttack {
  file: string;
  /** What the refusal's reason must say. */
  reason: RegExp;
}

/** Files that must be refused before Lean, each for its own reason. */
export const WHOLE_FILE_ATTACKS: Readonly<Record<string, WholeFileAttack>> = {
  "a sorry in an auxiliary": { file: `lemma aux_wf (n : Nat) : n + 0 = n := by sorry -- ${MARKER}\n\n${MAIN}`, reason: /banned `sorry`/ },
  "an axiom as an auxiliary": {
    file: `axiom aux_wf (n : Nat) : n + 0 = n\ndef ${MARKER} := 1\n\n${MAIN}`,
    reason: /`axiom aux_wf.*` at file 1:0 is not a declaration an auxiliary may be/,
  },
  "native_decide in an auxiliary": {
    file: `lemma ${MARKER} : 2 + 2 = 4 := by native_decide\n\n${AUX}\n\n${MAIN}`,
    reason: /banned `native_decide`/,
  },
  "implemented_by on an auxiliary": {
    file: `@[implemented_by Nat.zero] def ${MARKER} (n : Nat) : Nat := n\n\n${AUX}\n\n${MAIN}`,
    reason: /attribute `implemented_by`/,
  },
  "the theorem renamed": {
    file: `${AUX}\n\ntheorem add_zero_wf_${MARKER} (n : Nat) : n + 0 = n := by\n  exact aux_wf n`,
    reason: /declares no theorem `add_zero_wf`/,
  },
  "the theorem restated weaker": {
    file: `${AUX}\n\ntheorem add_zero_wf (n : Nat) (${MARKER} : n = 0) : n + 0 = n := by\n  exact aux_wf n`,
    reason: /statement is not the dataset's: at file 3:\d+ it has `\(` where the dataset's has `:`/,
  },
  "the theorem shadowed by an earlier declaration of its name": {
    file: `theorem add_zero_wf : True := trivial -- ${MARKER}\n\n${MAIN.replace("exact aux_wf n", "simp")}`,
    reason: /declares `add_zero_wf` 2 times/,
  },
  "the theorem shadowed in another namespace": {
    file: `theorem ${MARKER}.add_zero_wf (n : Nat) : n + 0 = n := by simp\n\n${MAIN.replace("exact aux_wf n", "simp")}`,
    reason: /declares `add_zero_wf` 2 times/,
  },
  "a second main theorem after the first": {
    file: `${AUX}\n\n${MAIN}\n\ntheorem ${MARKER} (n : Nat) : n + 0 = n := by\n  exact aux_wf n`,
    reason: /must be the file's last declaration/,
  },
  "a command hidden between declarations": {
    file: `${AUX}\n#eval IO.println "${MARKER}"\n${MAIN}`,
    reason: /`#eval.*` at file 2:0 is not a declaration an auxiliary may be|banned `#eval`/,
  },
  "an attribute command hidden between declarations": {
    file: `${AUX}\nattribute [simp] aux_wf -- ${MARKER}\n${MAIN}`,
    reason: /changes the attributes of declarations/,
  },
  "open … in before the theorem": {
    file: `${AUX}\n\nopen ${MARKER} in\n${MAIN}`,
    reason: /changes how the declarations after it read/,
  },
  "open … in as the preamble": {
    file: `open ${MARKER} in\n${MAIN}`,
    reason: /opens `PWNED`, which the theorem's header and context do not open/,
  },
  "set_option … in before the theorem": {
    file: `${AUX}\n\nset_option autoImplicit true in -- ${MARKER}\n${MAIN}`,
    reason: /changes how the declarations after it read/,
  },
  "set_option … in as the preamble": {
    file: `set_option autoImplicit true in -- ${MARKER}\n${MAIN}`,
    reason: /the preamble's `set_option autoImplicit true in`/,
  },
  "a namespace wrapping the theorem": {
    file: `namespace ${MARKER}\n\n${AUX}\n\n${MAIN}\n\nend ${MARKER}`,
    reason: /`namespace PWNED` at file 1:0 changes how the declarations after it read/,
  },
  "an instance that changes what + means": {
    file: `instance ${MARKER} : Add Nat := ⟨fun a _ => a⟩\n\n${MAIN.replace("exact aux_wf n", "rfl")}`,
    reason: /declares or changes instances, which change what the theorem's statement means/,
  },
  "an instance attribute on a def": {
    file: `@[instance] def ${MARKER} : Add Nat := ⟨fun a _ => a⟩\n\n${MAIN.replace("exact aux_wf n", "rfl")}`,
    reason: /attribute `instance`/,
  },
  "an auxiliary that redefines a name of the statement": {
    file: `def Nat.${MARKER} := 0\nabbrev Nat := Int\n\n${MAIN.replace("exact aux_wf n", "simp")}`,
    reason: /the auxiliary `Nat` declares a name the theorem's statement uses/,
  },
};
