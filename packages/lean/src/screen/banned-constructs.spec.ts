// Every entry of BANNED_CONSTRUCTS, each with a proof that uses it; a new entry
// without an example here fails the coverage test.
import { describe, expect, it } from "vitest";
import { BANNED_CONSTRUCTS, findBannedUse, lastComponent } from "./banned-constructs.js";
import { PROOF_ONLY } from "./construct.js";

const THEOREM = "foo";

/** Entry name → proof bodies that must be refused for that entry (first match). */
const EXAMPLES: Record<string, string[]> = {
  sorry: ["by\n  simp\n  sorry", "by exact x.sorry", "by exact «sorry»"],
  admit: ["by admit"],
  sorryAx: ["sorryAx _ false"],
  plausible: ["by plausible", "by\n  intro n\n  plausible (config := { numInst := 1000 })"],
  slim_check: ["by slim_check"],
  bv_decide: ["by bv_decide"],
  "bv_decide?": ["by bv_decide?"],
  bv_check: ['by bv_check "proof.lrat"'],
  include_str: ['by\n  have : (include_str "/etc/passwd").length > 0 := by decide\n  simp'],
  stop: ["by stop simp", "by\n  constructor\n  · simp\n  · stop\n    omega"],
  native_decide: ["by native_decide"],
  native: ["by decide +native", "by decide (config := { native := true })"],
  ofReduceBool: ["by exact Lean.ofReduceBool _ _ rfl"],
  trustCompiler: ["by exact Lean.trustCompiler"],
  "#eval": ["by simp\n#eval IO.println 1"],
  "#exit": ["by simp\n#exit"],
  "#print": ["by simp\n#print foo"],
  run_cmd: ["by simp\nrun_cmd pure ()"],
  run_tac: ["by run_tac pure ()"],
  run_elab: ["by simp\nrun_elab pure ()"],
  run_meta: ["by simp\nrun_meta pure ()"],
  by_elab: ["by_elab do pure default"],
  elab: ['by simp\nelab "x" : tactic => pure ()'],
  elab_rules: ["by simp\nelab_rules : tactic | `(tactic| x) => pure ()"],
  macro: ['by simp\nmacro "linarith" : tactic => `(tactic| sorry)'],
  macro_rules: ["by simp\nmacro_rules | `(tactic| trivial) => `(tactic| rfl)"],
  syntax: ['by simp\nsyntax "x" : tactic'],
  notation: ['by simp\nnotation "X" => 1'],
  infix: ['by simp\ninfix:65 " +* " => HAdd.hAdd'],
  infixl: ['by simp\ninfixl:65 " +* " => HAdd.hAdd'],
  infixr: ['by simp\ninfixr:65 " +* " => HAdd.hAdd'],
  prefix: ['by simp\nprefix:max "√" => Nat.sqrt'],
  postfix: ['by simp\npostfix:max "!" => Nat.factorial'],
  axiom: ["by simp\naxiom cheat : False"],
  implemented_by: ["by simp\n@[implemented_by g] def f := 1"],
  extern: ['by simp\n@[extern "f"] opaque f : Nat'],
  csimp: ["by simp\n@[csimp] theorem f_eq : @f = @g := rfl"],
  unsafe: [
    "by simp\nunsafe def f := 1",
    "by exact unsafe (unsafeCast ())",
    "by exact (0, unsafe evil)",
    "by aesop (add safe apply foo) (rule_sets := [unsafe x])",
    "by exact f add (unsafe x)",
  ],
  "set_option debug.*/kernel.*": [
    "by\n  set_option debug.skipKernelTC true in exact h",
    "by\n  set_option kernel.x true in exact h",
    "by\n  set_option «compiler.y» true in exact h",
  ],
  "debug.": ["by exact «debug».skipKernelTC"],
  skipKernelTC: ["by exact Foo.skipKernelTC"],
  import: ["by simp\nimport Mathlib"],
  "open private": ["by\n  open private Environment.mk in exact h"],
  initialize: ["by simp\ninitialize r : Unit ← pure ()"],
  builtin_initialize: ["by simp\nbuiltin_initialize pure ()"],
  "IO.": ['by exact (IO.Process.run { cmd := "ls" })'],
  "Lean.Elab": ["by exact Lean.Elab.Term.elabTerm"],
  "Lean.Meta": ["by exact Lean.Meta.mkFreshExprMVar"],
  modifyEnv: ["by exact modifyEnv id"],
  addDecl: ["by exact addDecl d"],
  "library search": [
    "by apply?",
    "by\n  intro x\n  exact?",
    "by exact?%",
    "by exact (exact?% : 1 = 1)",
    "by rw?",
    "by rw??",
    "by\n  observe h : 1 + 1 = 2\n  simp",
    "by observe? h : 1 = 1",
    "by hint",
    "by library_search",
    "by library_search!",
    "by rw_search",
    "by suggest",
    "by exact? says exact foo",
    "by\n  constructor <;> exact? using h",
    "by apply? using h",
  ],
  "redeclaring the theorem": ["by simp\ntheorem foo : True := trivial", "by simp\nlemma _root_.foo : True := trivial"],
  theorem: ["by simp\ntheorem other : True := trivial"],
  lemma: ["by simp\nlemma other : True := trivial"],
  def: ["by simp\ndef g := 1"],
  abbrev: ["by simp\nabbrev g := 1"],
  instance: ["by simp\ninstance : Inhabited Nat := ⟨0⟩"],
  example: ["by simp\nexample : True := trivial"],
  structure: ["by simp\nstructure S where x : Nat"],
  inductive: ["by simp\ninductive T | a"],
  class: ["by simp\nclass C where x : Nat"],
  namespace: ["by simp\nnamespace X"],
  section: ["by simp\nsection"],
  end: ["by simp\nend X"],
  mutual: ["by simp\nmutual"],
  universe: ["by simp\nuniverse u"],
  variable: ["by simp\nvariable (x : Nat)"],
  opaque: ["by simp\nopaque o : Nat"],
  attribute: ["by simp\nattribute [simp] foo"],
  export: ["by simp\nexport Nat (succ)"],
  noncomputable: ["by simp\nnoncomputable section"],
  "#check": ["by simp\n#check Nat"],
  "#reduce": ["by simp\n#reduce 2 ^ 100000"],
  "#synth": ["by simp\n#synth Inhabited Nat"],
  do: ["by\n  mytac do\n    pure ()", "by exact (do let x ← pure 1; pure x)"],
  "syntax quotation": ["by exact `(1 + 1)", "by exact `(tactic| simp)"],
  "name literal": ["by exact myOption `debug", "by exact mkOpt `pp.all"],
  "metaprogramming namespace": [
    'by exact System.FilePath.mk "x"',
    "by exact Elab.Term.elabTerm",
    "by exact EIO.toIO",
    "by exact _root_.Lean.Kernel.isDefEq",
    "by exact «Lean».Kernel.whnf",
  ],
  "environment API": ["by exact setEnv e", "by exact Foo.addDeclCore e 0 d none false", "by exact withOptions id"],
  "metaprogramming namespace opened": [
    "by\n  open Lean in exact foo",
    "by\n  open Nat Lean.Elab in exact foo",
    "by\n  open _root_.Lean in exact foo",
    "by\n  open scoped Lean in exact foo",
    "by\n  open Nat renaming succ → s, Lean in exact foo",
    "by\n  open Nat (succ) Lean.Elab in exact foo",
  ],
  "set_option (not allowed in a proof)": [
    "by\n  set_option autoImplicit true in exact h",
    "by\n  set_option «tactic».hygienic false in exact h",
    "by\n  set_option trace.Meta.synthInstance true in simp",
  ],
  polyrith: ["by polyrith"],
  "eval%": ["by exact (eval% 2 ^ 10 : Nat)", "by\n  have h : 1024 = eval% 2 ^ 10 := rfl\n  simp"],
  "attribute (not allowed)": [
    "by exact h\nwhere @[tactic simp] h : True := trivial",
    "by\n  let rec @[init] go : Nat := 0\n  simp",
    "by exact h\nwhere @[simp, term_elab x] h : True := trivial",
    "by exact h\nwhere @[app_unexpander Nat.add] h : True := trivial",
    "by exact h\nwhere @[simp h : True := trivial",
    `by exact h\nwhere @[${Array.from({ length: 80 }, () => "simp").join(", ")}, tactic simp] h : True := trivial`,
  ],
  "quote next to a symbol": [
    'by exact 1\né2\'"\' + " #eval 1 --"',
    'by exact f ⬝\'"\'"#eval evil\n-- "',
    "by exact x ⨍'a'",
    // `×'` is a token of the fallback table, but Lean without Mathlib reads `×` then the character literal `' '`.
    "by exact s ×' '\"' = t",
    "by exact f ''a'",
  ],
  "a name glued to a symbol": ["by exact ∘x'\"'\n#eval evil -- \"", 'by exact [FOOr"\\"\n#eval evil -- "', "by exact 𝟙_'a'"],
  "a command": [
    "by simp\nalias bar := foo",
    "by simp\nopen Evil",
    "by simp\nset_option pp.all true",
    "by simp\n#find _ + 0",
    "by simp\nderiving instance Repr for Nat",
    "by simp\nprivate lemma x : True := trivial",
    "by simp\ninclude h",
  ],
};

/** Entries refused only in the dataset's context and statement → contexts that must be refused for that entry. */
const CONTEXT_EXAMPLES: Record<string, string[]> = {
  "set_option (not allowed in a theorem)": ["set_option maxSteps2 4", "set_option trace.Meta.synthInstance true in\ndef x := 1"],
};

describe("BANNED_CONSTRUCTS", () => {
  it("has an example for every entry, and nothing else", () => {
    expect([...Object.keys(EXAMPLES), ...Object.keys(CONTEXT_EXAMPLES)].sort()).toEqual(
      BANNED_CONSTRUCTS.map((construct) => construct.name).sort(),
    );
  });

  for (const [name, proofs] of Object.entries(EXAMPLES)) {
    it(`refuses ${name} in a proof`, () => {
      for (const proof of proofs) {
        const use = findBannedUse(proof, "proof", THEOREM);
        expect(use?.construct.name, proof).toBe(name);
        expect(use?.construct.why.length).toBeGreaterThan(10);
      }
    });
  }

  for (const [name, contexts] of Object.entries(CONTEXT_EXAMPLES)) {
    it(`refuses ${name} in a context`, () => {
      for (const context of contexts) expect(findBannedUse(context, "context", THEOREM)?.construct.name, context).toBe(name);
    });
  }

  it("refuses every route to elaboration-time code in the context and the statement too, not only in the proof", () => {
    const proofOnly = new Set(BANNED_CONSTRUCTS.filter((construct) => construct.parts === PROOF_ONLY).map((construct) => construct.name));
    for (const name of ["do", "syntax quotation", "name literal", "metaprogramming namespace", "environment API", "eval%", "include_str"]) {
      expect(proofOnly.has(name), name).toBe(false);
      for (const proof of EXAMPLES[name]!) {
        const context = `theorem helper : True := ${proof}`;
        expect(findBannedUse(context, "context", THEOREM)?.construct.name, context).toBe(name);
        expect(findBannedUse(`theorem foo : (${proof.replace(/^by /u, "by\n  ")}) = 1`, "statement", THEOREM), proof).toBeDefined();
      }
    }
    expect(findBannedUse("open IO\ndef f := 1", "context", THEOREM)?.construct.name).toBe("metaprogramming namespace opened");
    expect(findBannedUse("namespace IO\ndef f := Process.output", "context", THEOREM)?.construct.name).toBe(
      "metaprogramming namespace opened",
    );
    expect(findBannedUse("theorem foo : (unsafeBaseIO (pure true)) = true", "statement", THEOREM)?.construct.name).toBe("environment API");
  });

  it("allows the attributes that register no code on a context's declarations, and no others", () => {
    for (const context of [
      "@[simp] theorem h : 1 = 1 := rfl",
      "@[ext, local simp] structure P where x : Nat",
      "attribute [local instance] f",
    ]) {
      expect(findBannedUse(context, "context", THEOREM), context).toBeUndefined();
    }
    for (const context of ["attribute [norm_num Nat.succ _] evalSucc", "@[aesop norm tactic] def t := 1", "@[init] def i := 1"]) {
      expect(findBannedUse(context, "context", THEOREM)?.construct.name, context).toBe("attribute (not allowed)");
    }
  });

  it("reports where the first banned construct is", () => {
    const proof = "by\n  simp\n  native_decide\n  sorry";
    const use = findBannedUse(proof, "proof", THEOREM)!;
    expect(use.construct.name).toBe("native_decide");
    expect(proof.slice(use.index, use.index + use.text.length)).toBe("native_decide");
  });

  it("does not fire inside longer identifiers or on name components after a dot", () => {
    for (const proof of [
      "by exact h_sorry",
      "by exact hsorry",
      "by rw [native_decide_eq]",
      "by exact sorry'",
      "by simp [Nat.add_def, Set.image.def]",
      "by exact List.prefix_refl",
      "by exact axioms_ok",
      "by simp [Finset.sum_range_succ]; ring",
      "by\n  classical\n  exact (inferInstance : Inhabited Nat).default",
      "by\n  open Nat in exact succ_ne_zero n",
      "by\n  set_option maxHeartbeats 400000 in nlinarith [sq_nonneg (a - b)]",
      "by exact foo_aux",
      // Aesop's rule phase, not Lean's `unsafe`.
      "by aesop (add unsafe 50% apply Nat.le_of_lt_succ)",
      "by aesop (add safe apply Nat.succ_le_of_lt, unsafe 20% apply Nat.le_of_lt_succ, norm simp Nat.add_zero)",
      "by simp [foo.eq_1]",
    ]) {
      expect(findBannedUse(proof, "proof", THEOREM), proof).toBeUndefined();
    }
  });

  // Issue #14, class 1: a command glued to the token before it, where Lean's lexer ends that token.
  it("refuses commands glued to the previous token, wherever Lean's tokenizer ends it", () => {
    for (const [proof, name] of [
      ["by exact h#eval IO.println 1", "#eval"],
      ["by simp\nexact h#exit", "#exit"],
      ["by exact 'a'theorem bar : False := sorry", "theorem"],
      ["by exact 'a'axiom cheat : False", "axiom"],
      ["by exact 'a'run_cmd pure ()", "run_cmd"],
      ["by exact 2theorem bar : True := trivial", "theorem"],
      ["by exact 0x1Ftheorem bar : True := trivial", "theorem"],
      ['by exact "s"#eval 1', "#eval"],
      ['by exact r#"raw"#axiom c : False', "axiom"],
      ["by exact «x»#eval 1", "#eval"],
      ["by exact xé#eval 1", "#eval"],
      ["by exact xétheorem bar : True := trivial", "theorem"],
      ["by exact h.1#exit", "#exit"],
      ["by exact (h)alias bar := foo", "a command"],
      ["by exact h#printaxioms", "#print"],
      ['by exact s!"{h}#eval"', undefined],
      ['by exact s!"{h #eval 1}"', "#eval"],
      ['by exact "{#eval 1}"', "#eval"],
      ["by exact h‹x›open Evil", "a command"],
    ] as const) {
      expect(findBannedUse(proof, "proof", THEOREM)?.construct.name, proof).toBe(name);
    }
  });

  it("reads a plain string's `{` also as Lean could (interpolated, then resynchronised) and refuses what hides there", () => {
    for (const proof of ['by exact "{" ++ "}"', 'by\n  show "{a}".length = 3 from rfl', 'by simp [String.append, "{x}"]']) {
      expect(findBannedUse(proof, "proof", THEOREM), proof).toBeUndefined();
    }
    for (const [proof, name] of [
      ['by exact foo "{#eval 1}"', "#eval"],
      ['by exact bar "{" x "#exit"', "#exit"],
      ['by exact baz "a{b}" "c\n  run_cmd pure ()"', "run_cmd"],
    ] as const) {
      const use = findBannedUse(proof, "proof", THEOREM);
      expect(use?.construct.name, proof).toBe(name);
      expect(use?.hiddenInString, proof).toBe(true);
    }
    const many = `by exact ${Array.from({ length: 17 }, () => '"{"').join(" ++ ")}`;
    expect(findBannedUse(many, "proof", THEOREM)?.construct.name).toBe("many `{` in strings");
  });

  it("lets `open … in` and `set_option … in` scope over the proof, but not past it", () => {
    for (const proof of [
      "by\n  open Nat in exact succ_ne_zero n",
      "by\n  open scoped BigOperators in simp",
      "by\n  open Nat hiding add_comm in simp",
      "by\n  open Nat renaming succ → s, zero → z in simp",
      "by\n  set_option maxRecDepth 2000 in simp",
      "by\n  set_option linter.unusedVariables false in simp",
      "by\n  set_option push_neg.use_distrib true in push_neg",
      "by\n  set_option tactic.skipAssignedInstances false in norm_num",
      "by\n  set_option exponentiation.threshold 1000 in norm_num",
      "set_option maxSynthPendingDepth 3 in by simp",
    ]) {
      expect(findBannedUse(proof, "proof", THEOREM), proof).toBeUndefined();
    }
    for (const proof of [
      "by simp\nopen Nat",
      "by simp\nopen Nat hiding x",
      "by simp\nset_option pp.all true",
      "by simp\nopen Nat (x)\nnamespace N",
    ]) {
      expect(findBannedUse(proof, "proof", THEOREM)?.construct.name, proof).toMatch(/^(a command|namespace)$/);
    }
  });

  it("allows declarations in the dataset's context but never the theorem's own name", () => {
    const context = "open Real\ndef helper (n : Nat) := n + 1\ntheorem helper_pos (n : Nat) : 0 < helper n := Nat.succ_pos n";
    expect(findBannedUse(context, "context", THEOREM)).toBeUndefined();
    expect(findBannedUse("theorem Bar.foo : True := trivial", "context", THEOREM)?.construct.name).toBe("redeclaring the theorem");
    expect(findBannedUse("def helper := sorry", "context", THEOREM)?.construct.name).toBe("sorry");
  });

  it("checks the statement for poison but not for its own declaration", () => {
    expect(findBannedUse("theorem foo (n : Nat) : n + 0 = n", "statement", THEOREM)).toBeUndefined();
    expect(findBannedUse("theorem foo (h : sorry) : True", "statement", THEOREM)?.construct.name).toBe("sorry");
  });

  it("takes the last component of a name, «quoted» or not", () => {
    expect(lastComponent("Nat.foo")).toBe("foo");
    expect(lastComponent("«my thm»")).toBe("my thm");
    expect(lastComponent("A.«b.c»")).toBe("b.c");
    expect(findBannedUse("by simp\ntheorem «my thm» : True := trivial", "proof", "«my thm»")?.construct.name).toBe(
      "redeclaring the theorem",
    );
  });
});

describe("library search", () => {
  it.each(["simp?", "simp_all?", "dsimp?", "simp?!", "aesop?", "show_term simp", "unfold? x", "simp? says simp only [h]"])(
    "allows the `?` form %j, which runs one named tactic and searches nothing beyond it",
    (tactic) => {
      expect(findBannedUse(`by ${tactic}`, "proof", THEOREM)?.construct.name).toBeUndefined();
    },
  );

  it.each(["by exact h.hint", "by exact Foo.observe", "by exact suggestion", "by exact hint_lemma", "by apply foo", "by exact observe_x"])(
    "allows names that only look like a search tactic: %j",
    (proof) => {
      expect(findBannedUse(proof, "proof", THEOREM)).toBeUndefined();
    },
  );
});
