import { describe, expect, it } from "vitest";
import { InvalidField, qualifiedName, theoremTarget, type TheoremFields } from "./theorem-target.js";

const base: TheoremFields = { name: "", statement: "theorem t (n : Nat) : n + 0 = n", context: "", imports: [], header: "" };

function invalid(fields: Partial<TheoremFields> | undefined): InvalidField {
  try {
    theoremTarget(fields === undefined ? undefined : { ...base, ...fields }, "");
  } catch (error) {
    if (error instanceof InvalidField) return error;
    throw error;
  }
  throw new Error("expected InvalidField");
}

describe("theoremTarget", () => {
  it("takes the declared name and strips a trailing := by sorry, := sorry, := by or :=", () => {
    for (const tail of ["", " := by sorry", " := sorry", " :=  by\n", " :=", "\n  := by\n  sorry"]) {
      const target = theoremTarget({ ...base, statement: base.statement + tail }, "");
      expect(target.statement, tail).toBe("theorem t (n : Nat) : n + 0 = n");
      expect(target.name).toBe("t");
    }
  });

  it("keeps a := inside the statement", () => {
    const target = theoremTarget({ ...base, statement: "theorem t : (let x := 3; x) = 3 := by sorry" }, "");
    expect(target.statement).toBe("theorem t : (let x := 3; x) = 3");
  });

  it("reads names with namespaces, primes, subscripts, «quotes» and attributes", () => {
    const cases: [string, string][] = [
      ["theorem Nat.foo_bar' : True", "Nat.foo_bar'"],
      ["lemma h₁ : True", "h₁"],
      ["theorem «my theorem» : True", "«my theorem»"],
      ["@[simp] protected theorem X.y (a : Nat) : a = a", "X.y"],
      ["/-- docstring -/\ntheorem mathd_algebra_478\n  (b h v : ℝ) : v = 65", "mathd_algebra_478"],
      ["theorem amc12a_2019_p21 {z : ℂ} : z = z", "amc12a_2019_p21"],
    ];
    for (const [statement, name] of cases) expect(theoremTarget({ ...base, statement }, "").name, statement).toBe(name);
  });

  it("builds the header: verbatim, else from imports, else the default", () => {
    expect(theoremTarget({ ...base, header: "import Mathlib\nopen Real\n", imports: ["Ignored"] }, "").header).toBe(
      "import Mathlib\nopen Real",
    );
    expect(theoremTarget({ ...base, imports: ["Mathlib", "Aesop"] }, "").header).toBe("import Mathlib\nimport Aesop");
    expect(theoremTarget(base, "import Mathlib").header).toBe("import Mathlib");
    expect(theoremTarget(base, "").header).toBe("");
  });

  it("strips comments from the statement and the context", () => {
    const target = theoremTarget({ ...base, statement: "theorem t : True -- c", context: "open Nat -- c\n" }, "");
    expect(target.statement).toBe("theorem t : True");
    expect(target.context).toBe("open Nat");
  });

  it("names the field and what is accepted when it cannot be used", () => {
    expect(invalid(undefined).field).toBe("theorem");
    expect(invalid({ statement: "  -- only a comment" })).toMatchObject({ field: "theorem.statement" });
    expect(invalid({ statement: "example : True" }).message).toBe(
      'theorem.statement: must declare a named theorem ("theorem NAME ..." or "lemma NAME ..."), so that #print axioms can check it; got: example : True',
    );
    expect(invalid({ statement: "def f := 1" }).field).toBe("theorem.statement");
    expect(invalid({ name: "u" }).message).toBe('theorem.name: is "u" but theorem.statement declares "t"; they must agree');
    expect(invalid({ imports: ["Mathlib", "Mathlib Tactic"] }).message).toBe(
      'theorem.imports[1]: "Mathlib Tactic" is not a Lean module name (e.g. "Mathlib" or "Mathlib.Tactic")',
    );
  });

  it("refuses an overlong statement or context as INVALID_ARGUMENT naming the field, however many tokens it holds", () => {
    const long = `theorem t : ${"x ∧ ".repeat(100_000)}True`;
    expect(invalid({ statement: long })).toMatchObject({ field: "theorem.statement" });
    expect(invalid({ statement: long }).message).toMatch(/characters long; at most 65536/);
    expect(invalid({ context: "def x := 1\n".repeat(40_000) })).toMatchObject({ field: "theorem.context" });
  });

  it("accepts a matching name", () => {
    expect(theoremTarget({ ...base, name: "t" }, "").name).toBe("t");
  });

  it("places a nested field under a prefix", () => {
    expect(invalid({ name: "u" }).under("items[2].").message).toMatch(/^items\[2\]\.theorem\.name: /);
  });
});

describe("qualifiedName", () => {
  it("prefixes the namespaces the context leaves open, and drops a leading _root_", () => {
    expect(qualifiedName("", "foo")).toBe("foo");
    expect(qualifiedName("namespace A.B\nsection\nopen Nat", "foo")).toBe("A.B.foo");
    expect(qualifiedName("namespace A\nnamespace B\nend B", "foo")).toBe("A.foo");
    expect(qualifiedName("namespace A\nsection S\nend S\nend A", "Nat.foo")).toBe("Nat.foo");
    expect(qualifiedName("namespace A", "_root_.foo")).toBe("foo");
  });
});
