// Lean commands in a theorem's context or statement, through every entry point that
// takes a theorem, over gRPC: the verifier's Verify, VerifyBatch and StartProof, the
// reward service's Score and ScoreGroup (which ask the verifier), and the
// orchestrator's StartRun and Evaluate with inline theorems or a dataset file. Each call is refused with
// INVALID_ARGUMENT naming the field, and nothing of the theorem reaches the REPL
// stand-in behind the real verifier, which would elaborate it (and log it) otherwise.
// The same mesh proves an honest theorem with a context, so the harness does let Lean
// text through when it should.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { HONEST_CONTEXTS, HOSTILE_CONTEXTS, HOSTILE_STATEMENTS, MARKER } from "./lean-text-attacks.js";
import { startLeanTextMesh, type LeanTextMesh } from "./lean-text-mesh.js";

const STATEMENT = "theorem add_zero' (n : Nat) : n + 0 = n";
const HEADER = "import Mathlib";
const PROOF = "by simp";

let mesh: LeanTextMesh;
beforeAll(async () => {
  mesh = await startLeanTextMesh();
}, 60_000);
afterAll(async () => {
  await mesh?.close();
});

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

const theorem = (fields: { context?: string; statement?: string }) => ({
  id: "t1",
  name: "add_zero'",
  header: HEADER,
  statement: STATEMENT,
  kind: TaskKind.LEAN_PROOF,
  ...fields,
});

const completion = (proof: string) => ({ text: `\`\`\`lean\n${STATEMENT} := ${proof}\n\`\`\``, tokenIds: [1, 2, 3] });

/** Every entry point, with the field prefix its refusal names the field with. */
const ENTRY_POINTS: Record<string, { call: (t: ReturnType<typeof theorem>) => Promise<unknown>; field: (name: string) => RegExp }> = {
  Verify: { call: (t) => mesh.verifier.verify({ theorem: t, proof: PROOF }), field: (f) => new RegExp(`^theorem\\.${f}: `) },
  VerifyBatch: {
    call: (t) =>
      drain(
        mesh.verifier.verifyBatch({
          items: [
            { theorem: theorem({}), proof: PROOF },
            { theorem: t, proof: PROOF },
          ],
        }),
      ),
    field: (f) => new RegExp(`^items\\[1\\]\\.theorem\\.${f}: `),
  },
  StartProof: { call: (t) => mesh.verifier.startProof({ theorem: t }), field: (f) => new RegExp(`^theorem\\.${f}: `) },
  Score: { call: (t) => mesh.reward.score({ theorem: t, completion: completion(PROOF) }), field: (f) => new RegExp(`^theorem\\.${f}: `) },
  ScoreGroup: {
    call: (t) => mesh.reward.scoreGroup({ theorem: t, completions: [completion(PROOF), completion("by omega")] }),
    field: (f) => new RegExp(`^theorem\\.${f}: `),
  },
  "StartRun (inline theorems)": {
    call: (t) => mesh.orchestrator.startRun({ theorems: [theorem({}), { ...t, id: "t2" }] }),
    field: (f) => new RegExp(`line 2, field "${f}": `),
  },
  "StartRun (dataset file)": {
    call: (t) => mesh.orchestrator.startRun({ datasetPath: datasetFile(t) }),
    field: (f) => new RegExp(`line 2, field "${f}": `),
  },
  "Evaluate (dataset file)": {
    call: (t) => drain(mesh.orchestrator.evaluate({ datasetPath: datasetFile(t) })),
    field: (f) => new RegExp(`line 2, field "${f}": `),
  },
  "Evaluate (inline theorems)": {
    call: (t) => drain(mesh.orchestrator.evaluate({ theorems: [t] })),
    field: (f) => new RegExp(`line 1, field "${f}": `),
  },
};

/** A dataset file of an honest record then `theorem`'s, in the orchestrator's data root; its name. */
function datasetFile(t: ReturnType<typeof theorem>): string {
  datasets += 1;
  const name = `attack-${datasets}.jsonl`;
  const record = (r: ReturnType<typeof theorem>) =>
    JSON.stringify({ name: r.name || undefined, id: r.id, statement: r.statement, context: r.context, header: r.header });
  writeFileSync(join(mesh.dataRoot, name), `${record(theorem({}))}\n${record({ ...t, id: "t2" })}\n`);
  return name;
}
let datasets = 0;

const ATTACKS = [
  ...Object.entries(HOSTILE_CONTEXTS).map(([name, context]) => ({
    name: `context: ${name}`,
    field: "context",
    theorem: theorem({ context }),
  })),
  // The statements declare their own name; the request leaves the name to them.
  ...Object.entries(HOSTILE_STATEMENTS).map(([name, statement]) => ({
    name: `statement: ${name}`,
    field: "statement",
    theorem: { ...theorem({ statement }), name: "" },
  })),
];

describe("Lean commands in a theorem never reach the REPL, whatever the entry point", () => {
  for (const [entry, { call, field }] of Object.entries(ENTRY_POINTS)) {
    it.each(ATTACKS)(`${entry} refuses the $name`, async ({ field: name, theorem }) => {
      const error = await refusal(() => call(theorem));
      expect(error.code, error.rawMessage).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(field(name));
      expect(mesh.replInputs().filter((input) => input.includes(MARKER))).toEqual([]);
    });
  }
});

describe("honest theorems with a context pass every screen and reach Lean", () => {
  it.each(Object.entries(HONEST_CONTEXTS))("Verify proves the theorem after the context %s", async (_name, context) => {
    const response = await mesh.verifier.verify({ theorem: theorem({ context }), proof: PROOF });
    expect(response.verdict, response.reason).toBe(Verdict.PROVED);
    expect(mesh.replInputs().some((input) => input.startsWith(context.split("\n")[0]!.replace(/\/--.*-\//u, "")))).toBe(true);
  });

  it("Score solves it through the reward service", async () => {
    const { result } = await mesh.reward.score({
      theorem: theorem({ context: HONEST_CONTEXTS["a definition"] }),
      completion: completion(PROOF),
    });
    expect(result!.solved).toBe(true);
  });
});

describe("the REPL's log", () => {
  it("holds nothing of any attack, and the honest theorems, which it elaborated", () => {
    expect(mesh.replInputs().filter((input) => input.includes(MARKER))).toEqual([]);
    expect(mesh.replInputs().filter((input) => input.includes(STATEMENT)).length).toBeGreaterThan(Object.keys(HONEST_CONTEXTS).length);
  });
});
