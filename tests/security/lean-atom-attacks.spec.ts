// The third round's attacks on the Lean screen, through every entry point that takes
// Lean text, over gRPC to the real services (the REPL stand-in behind the verifier logs
// whatever reaches it, and would elaborate it):
//   - a notation atom the context declares (`+1a`, `∘1x`, `≤1x`, an infix ` +1a `) used in
//     the statement or in the model's proof, so that Lean reads a character literal or a
//     raw string and then a command where a screen without the atom reads a string;
//   - library search under every name Mathlib gives it.
// The contexts alone (an atom, then a command it hides) are in lean-text-attacks.ts and
// run at every entry point in lean-text-entry-points.spec.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { Verdict, VerdictTier } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { MARKER } from "./lean-text-attacks.js";
import { startLeanTextMesh, type LeanTextMesh } from "./lean-text-mesh.js";

const SHELL = `#eval IO.Process.output { cmd := "sh", args := #["-c", "echo ${MARKER}"] }`;
const HEADER = "import Mathlib";
const STATEMENT = "theorem add_zero' (n : Nat) : n + 0 = n";

/** Declarations a context may hold (each passes the screen alone), and how their atom hides a command. */
const ATOMS = [
  { declaration: 'notation "+1a" => (0 : Nat)', hide: `+1a'"'` },
  { declaration: 'notation "∘1x" => (0 : Nat)', hide: `∘1x'"'` },
  { declaration: 'notation "≤1x" => (0 : Nat)', hide: `≤1x'"'` },
  { declaration: 'infixl:65 " +1a " => HAdd.hAdd', hide: `1 +1a'"'` },
  { declaration: 'notation "+1a" => (0 : Nat)', hide: `+1ar"\\"` },
];

let mesh: LeanTextMesh;
beforeAll(async () => {
  mesh = await startLeanTextMesh();
}, 60_000);
afterAll(async () => {
  await mesh?.close();
});

const theorem = (fields: { context?: string; statement?: string }) => ({
  id: "t1",
  name: "",
  header: HEADER,
  statement: STATEMENT,
  kind: TaskKind.LEAN_PROOF,
  ...fields,
});

const completion = (proof: string) => ({ text: `\`\`\`lean\n${STATEMENT} := ${proof}\n\`\`\``, tokenIds: [1, 2, 3] });

async function refusal(call: () => Promise<unknown>): Promise<ConnectError> {
  try {
    await call();
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("expected the call to be refused");
}

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) {
    // A refusal comes before the first message.
  }
}

const reachedRepl = () => mesh.replInputs().filter((input) => input.includes(MARKER));

describe("a notation atom the context declares hides a command in the statement", () => {
  const ENTRY_POINTS: Record<string, (t: ReturnType<typeof theorem>) => Promise<unknown>> = {
    Verify: (t) => mesh.verifier.verify({ theorem: t, proof: "by simp" }),
    VerifyBatch: (t) => drain(mesh.verifier.verifyBatch({ items: [{ theorem: t, proof: "by simp" }] })),
    StartProof: (t) => mesh.verifier.startProof({ theorem: t }),
    Score: (t) => mesh.reward.score({ theorem: t, completion: completion("by simp") }),
    ScoreGroup: (t) => mesh.reward.scoreGroup({ theorem: t, completions: [completion("by simp")] }),
    StartRun: (t) => mesh.orchestrator.startRun({ theorems: [t] }),
    Evaluate: (t) => drain(mesh.orchestrator.evaluate({ theorems: [t] })),
  };
  const cases = Object.keys(ENTRY_POINTS).flatMap((entry) => ATOMS.map((atom) => ({ entry, ...atom })));

  it.each(cases)("$entry refuses the statement using $declaration's atom ($hide)", async ({ entry, declaration, hide }) => {
    const statement = `theorem t (n : Nat) : n = ${hide}\n${SHELL}\n-- "`;
    const error = await refusal(() => ENTRY_POINTS[entry]!(theorem({ context: declaration, statement })));
    expect(error.code, error.rawMessage).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(/statement/);
    expect(reachedRepl()).toEqual([]);
  });
});

describe("a notation atom the context declares hides a command in the model's proof", () => {
  it.each(ATOMS)("Verify rejects the proof using $declaration's atom ($hide) before Lean", async ({ declaration, hide }) => {
    const proof = `by\n  have h : Nat := ${hide}\n${SHELL}\n-- "`;
    const response = await mesh.verifier.verify({ theorem: theorem({ context: declaration }), proof });
    expect(response, response.reason).toMatchObject({ verdict: Verdict.REJECTED, decidedBy: VerdictTier.SCREEN });
    expect(reachedRepl()).toEqual([]);
  });

  it.each(ATOMS)("Score and VerifyBatch reject it too ($hide)", async ({ declaration, hide }) => {
    const proof = `by\n  have h : Nat := ${hide}\n${SHELL}\n-- "`;
    const t = theorem({ context: declaration });
    const { result } = await mesh.reward.score({ theorem: t, completion: completion(proof) });
    expect(result!.solved).toBe(false);
    for await (const item of mesh.verifier.verifyBatch({ items: [{ theorem: t, proof }] })) {
      expect(item.result!.verdict, item.result!.reason).toBe(Verdict.REJECTED);
    }
    expect(reachedRepl()).toEqual([]);
  });

  it("an honest use of a declared atom still reaches Lean and proves", async () => {
    const context = 'notation "‖" x "‖" => (x : Nat)\ninfixl:65 " +ᵥ " => HAdd.hAdd';
    const response = await mesh.verifier.verify({ theorem: theorem({ context }), proof: "by\n  have h : ‖n‖ +ᵥ 0 = n := by simp\n  simp" });
    expect(response.verdict, response.reason).toBe(Verdict.PROVED);
  });
});

/** Mathlib's library-search tactics, by every name (docs/guide/security.md). */
const LIBRARY_SEARCH_NAMES = [
  "exact?",
  "apply?",
  "rw?",
  "rw??",
  "exact?%",
  "observe",
  "observe?",
  "hint",
  "rw_search",
  "library_search",
  "library_search!",
  "suggest",
];

describe("library search by any name", () => {
  const proofs = LIBRARY_SEARCH_NAMES.map((name) => ({
    name,
    proof: name === "observe" ? "by\n  observe h : n + 0 = n\n  exact h" : `by ${name}`,
  }));

  it.each(proofs)("Verify rejects `$name` before Lean", async ({ proof }) => {
    const response = await mesh.verifier.verify({ theorem: theorem({}), proof });
    expect(response, response.reason).toMatchObject({ verdict: Verdict.REJECTED, decidedBy: VerdictTier.SCREEN });
    expect(response.reason).toMatch(/library search/);
  });

  it.each(["exact? says exact Nat.add_zero n", "rw_search", "hint"])("Score does not reward `%s`", async (tactic) => {
    const { result } = await mesh.reward.score({ theorem: theorem({}), completion: completion(`by ${tactic}`) });
    expect(result!.solved).toBe(false);
  });

  it("the `?` forms that run one named tactic still reach Lean", async () => {
    const response = await mesh.verifier.verify({ theorem: theorem({}), proof: "by simp?" });
    expect(response.verdict, response.reason).toBe(Verdict.PROVED);
  });
});
