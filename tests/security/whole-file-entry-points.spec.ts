// Whole-file proofs through every entry point that takes a proof, over gRPC: the
// verifier's Verify and VerifyBatch, and the reward service's Score (which extracts the
// file from a completion and asks the verifier). The REPL stand-in behind the real
// verifier elaborates whatever reaches it cleanly, but says what Lean says where the
// tests rely on it: a proof that uses `aux_wf` without declaring it is an unknown
// identifier (so dropping the auxiliaries fails), and a file whose auxiliary
// `choice_wf` uses Lean.ofReduceBool makes the theorem depend on it (so the axiom check
// covers the auxiliaries). Every attack is refused before Lean, for its own reason.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { ProofFormat, TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { Verdict, VerdictTier, type VerifyBatchResponse } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { startLeanTextMesh, type LeanTextMesh } from "./lean-text-mesh.js";
import { HONEST_WHOLE_FILES, MARKER, WHOLE_FILE_ATTACKS, WHOLE_FILE_THEOREM } from "./whole-file-attacks.js";

const ISSUE_EXAMPLE = HONEST_WHOLE_FILES["a lemma, then the theorem (the issue's example)"]!;

let mesh: LeanTextMesh;
beforeAll(async () => {
  mesh = await startLeanTextMesh([
    {
      // Lean without the lemma: `aux_wf` is unknown.
      when: { cmd: { regex: "^(?![\\s\\S]*lemma aux_wf)[\\s\\S]*exact aux_wf" }, env: "given" },
      reply: {
        json: { messages: [{ severity: "error", pos: { line: 1, column: 50 }, endPos: null, data: "unknown identifier 'aux_wf'" }] },
      },
    },
    { when: { cmd: { includes: "lemma choice_wf" }, env: "given" }, declares: [{ name: "add_zero_wf", axioms: ["Lean.ofReduceBool"] }] },
  ]);
}, 60_000);
afterAll(async () => {
  await mesh?.close();
});

const theorem = (proofFormat = ProofFormat.WHOLE_FILE) => ({
  id: "wf",
  name: WHOLE_FILE_THEOREM.name,
  header: WHOLE_FILE_THEOREM.header,
  statement: WHOLE_FILE_THEOREM.statement,
  kind: TaskKind.LEAN_PROOF,
  proofFormat,
});
const completion = (file: string) => ({ text: `Here is the file.\n\`\`\`lean4\n${file}\n\`\`\``, tokenIds: [1, 2, 3] });

async function batch(items: { theorem: ReturnType<typeof theorem>; proof: string }[], invalidItemsAsResults = false) {
  const results: VerifyBatchResponse[] = [];
  for await (const result of mesh.verifier.verifyBatch({ items, invalidItemsAsResults })) results.push(result);
  return results.sort((a, b) => a.index - b.index).map((r) => r.result!);
}

const reachedLean = () => mesh.replInputs().filter((input) => input.includes(MARKER));

describe("honest whole files verify, with their auxiliaries", () => {
  it.each(Object.entries(HONEST_WHOLE_FILES))("Verify proves %s", async (_name, file) => {
    const response = await mesh.verifier.verify({ theorem: theorem(), proof: file });
    expect(response.verdict, response.reason).toBe(Verdict.PROVED);
    // Lean is sent the auxiliaries, then the dataset's own statement.
    expect(response.checkedSource).toContain(`${WHOLE_FILE_THEOREM.statement} := `);
  });

  it("Score solves the issue's example, which a body extraction would break (the lemma dropped)", async () => {
    for (const format of [ProofFormat.WHOLE_FILE, ProofFormat.AUTO]) {
      const { result } = await mesh.reward.score({ theorem: theorem(format), completion: completion(ISSUE_EXAMPLE) });
      expect(result!.verification!.reason).not.toMatch(/unknown identifier/);
      expect(result!.solved).toBe(true);
      expect(result!.verification!.checkedSource).toContain("lemma aux_wf (n : Nat) : n + 0 = n := by simp");
    }
    // The body format keeps today's reading: the body alone, and Lean does not know the lemma.
    const { result } = await mesh.reward.score({ theorem: theorem(ProofFormat.BODY), completion: completion(ISSUE_EXAMPLE) });
    expect(result!.solved).toBe(false);
    expect(result!.verification!.reason).toMatch(/unknown identifier 'aux_wf'/);
  });

  it("auto reads a body as a body", async () => {
    const response = await mesh.verifier.verify({ theorem: theorem(ProofFormat.AUTO), proof: "by simp" });
    expect(response.verdict, response.reason).toBe(Verdict.PROVED);
    expect(response.checkedSource).toBe(`${WHOLE_FILE_THEOREM.statement} := by simp`);
  });

  it("the axiom check covers the auxiliaries: the theorem depends on what its lemma used", async () => {
    const file = `lemma choice_wf (n : Nat) : n + 0 = n := by simp\n\n${WHOLE_FILE_THEOREM.statement} := by\n  exact choice_wf n`;
    const response = await mesh.verifier.verify({ theorem: theorem(), proof: file });
    expect(response.verdict).toBe(Verdict.ERROR);
    expect(response.axioms).toEqual(["Lean.ofReduceBool"]);
    expect(response.reason).toMatch(/Lean\.ofReduceBool/);
  });
});

describe("every whole-file attack is refused before Lean, at every entry point", () => {
  it.each(Object.entries(WHOLE_FILE_ATTACKS))("Verify refuses %s", async (_name, { file, reason }) => {
    const response = await mesh.verifier.verify({ theorem: theorem(), proof: file });
    expect(response.verdict, response.reason).toBe(Verdict.REJECTED);
    expect(response.decidedBy).toBe(VerdictTier.SCREEN);
    expect(response.reason).toMatch(reason);
    expect(reachedLean()).toEqual([]);
  });

  it.each(Object.entries(WHOLE_FILE_ATTACKS))("VerifyBatch refuses %s beside an honest file", async (_name, { file, reason }) => {
    const [honest, attack] = await batch([
      { theorem: theorem(), proof: ISSUE_EXAMPLE },
      { theorem: theorem(), proof: file },
    ]);
    expect(honest!.verdict, honest!.reason).toBe(Verdict.PROVED);
    expect(attack!.verdict).toBe(Verdict.REJECTED);
    expect(attack!.reason).toMatch(reason);
    expect(reachedLean()).toEqual([]);
  });

  it.each(Object.entries(WHOLE_FILE_ATTACKS))("Score pays nothing for %s", async (_name, { file, reason }) => {
    const { result } = await mesh.reward.score({ theorem: theorem(ProofFormat.AUTO), completion: completion(file) });
    expect(result!.solved).toBe(false);
    expect(result!.verification!.verdict).toBe(Verdict.REJECTED);
    expect(result!.verification!.reason).toMatch(reason);
    expect(reachedLean()).toEqual([]);
  });
});

describe("ScoreGroup, the call a training run scores its groups with", () => {
  it("pays the honest file and nothing for any attack in the same group", async () => {
    const attacks = Object.values(WHOLE_FILE_ATTACKS);
    const { results } = await mesh.reward.scoreGroup({
      theorem: theorem(),
      completions: [completion(ISSUE_EXAMPLE), ...attacks.map(({ file }) => completion(file))],
    });
    expect(results[0]!.solved, results[0]!.verification?.reason).toBe(true);
    results.slice(1).forEach((result, i) => {
      expect(result.solved).toBe(false);
      expect(result.verification!.reason).toMatch(attacks[i]!.reason);
    });
    expect(results[0]!.reward).toBeGreaterThan(Math.max(...results.slice(1).map((r) => r.reward)));
    expect(reachedLean()).toEqual([]);
  });
});

describe("VerifyBatch with one bad item among many", () => {
  const bad = { ...theorem(), statement: `theorem t : True\n#eval IO.println "${MARKER}"`, name: "" };

  it("fails the call naming the item, by default", async () => {
    const error = await batch([
      { theorem: theorem(), proof: ISSUE_EXAMPLE },
      { theorem: bad, proof: "by trivial" },
    ]).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(error?.code).toBe(Code.InvalidArgument);
    expect(error?.rawMessage).toMatch(/^items\[1\]\.theorem\.statement: /);
  });

  it("answers the bad item with its own REJECTED result and checks the rest, with invalid_items_as_results", async () => {
    const [first, second, third] = await batch(
      [
        { theorem: theorem(), proof: ISSUE_EXAMPLE },
        { theorem: bad, proof: "by trivial" },
        { theorem: theorem(ProofFormat.BODY), proof: "by simp" },
      ],
      true,
    );
    expect(first!.verdict, first!.reason).toBe(Verdict.PROVED);
    expect(second!.verdict).toBe(Verdict.REJECTED);
    expect(second!.decidedBy).toBe(VerdictTier.SCREEN);
    expect(second!.reason).toMatch(/^invalid item: items\[1\]\.theorem\.statement: /);
    expect(third!.verdict, third!.reason).toBe(Verdict.PROVED);
    expect(reachedLean()).toEqual([]);
  });
});
