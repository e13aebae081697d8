// Every entry point of the verifier that takes a theorem header (Verify, VerifyBatch,
// StartProof) passes it through the one header check before any worker sees it: a
// header that would run code refuses the call, naming the field, and never reaches
// the REPL; honest dataset headers pass; the operator's list narrows what passes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { EVAL_HEADER, HONEST_HEADERS, HOSTILE_HEADERS } from "../../../tests/security/header-attacks.js";
import { VerifierConfigSchema } from "../src/config.js";
import { standIn, type StandIn } from "./support/stand-in.js";
import { rejection, startVerifier, type Harness } from "./support/verifier-harness.js";

const theorem = (header: string) => ({ name: "t", statement: "theorem t : True", header });
const proof = "by trivial";

const repl: StandIn = standIn({ rules: [{ when: { cmd: { includes: "trivial" } }, declares: { axioms: [] } }] });
let harness: Harness;
beforeAll(async () => {
  harness = await startVerifier({ repl: { command: repl.command } });
});
afterAll(async () => {
  await harness.close();
  repl.cleanup();
});

/** Every command the stand-in received, as text. */
const commandsSent = () => repl.requests().map((logged) => (logged.request.kind === "command" ? logged.request.cmd : ""));

describe("the header check at every verifier entry point", () => {
  const entryPoints: Record<string, (header: string) => Promise<unknown>> = {
    Verify: (header) => harness.client.verify({ theorem: theorem(header), proof }),
    VerifyBatch: async (header) => {
      for await (const _ of harness.client.verifyBatch({
        items: [
          { theorem: theorem("import Mathlib"), proof },
          { theorem: theorem(header), proof },
        ],
      })) {
        // A bad item fails the call before any item runs.
      }
    },
    StartProof: (header) => harness.client.startProof({ theorem: theorem(header) }),
  };

  for (const [entry, call] of Object.entries(entryPoints)) {
    it.each(Object.entries(HOSTILE_HEADERS))(`${entry} refuses %s, and nothing of it reaches the REPL`, async (_name, header) => {
      const error = await rejection(call(header));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(/^(items\[1\]\.)?theorem\.header: line \d+ /);
      expect(commandsSent().filter((cmd) => cmd.includes("#eval") || cmd.includes("IO.Process") || cmd.includes("run_cmd"))).toEqual([]);
    });
  }

  it.each(Object.entries(HONEST_HEADERS))("honest header %s: PROVED, the header elaborated as written", async (_name, header) => {
    const response = await harness.client.verify({ theorem: theorem(header), proof });
    expect(response.verdict, response.reason).toBe(Verdict.PROVED);
    if (header.trim() !== "") expect(commandsSent()).toContain(header.replaceAll("\r\n", "\n").trim());
  });

  it("a module name in theorem.imports cannot carry a command either", async () => {
    const error = await rejection(
      harness.client.verify({ theorem: { name: "t", statement: "theorem t : True", imports: ["Lean\n#eval 1"] }, proof }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toContain("theorem.imports[0]");
  });
});

describe("repl.allowed_headers", () => {
  it("accepts only the listed headers (after trimming) when set", async () => {
    const listed = await startVerifier({ repl: { command: repl.command, allowed_headers: ["import Mathlib\nopen Real"] } });
    try {
      expect((await listed.client.verify({ theorem: theorem("import Mathlib\r\nopen Real\n"), proof })).verdict).toBe(Verdict.PROVED);
      const error = await rejection(listed.client.verify({ theorem: theorem("import Mathlib"), proof }));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toBe("theorem.header: is not one of the 1 headers this verifier accepts (repl.allowed_headers)");
    } finally {
      await listed.close();
    }
  });

  it("refuses a config whose own headers fail the screen, naming the key", () => {
    for (const [key, repl] of [
      ["repl.allowed_headers.1", { allowed_headers: ["import Mathlib", EVAL_HEADER] }],
      ["repl.warm_headers.0", { warm_headers: [EVAL_HEADER] }],
      ["repl.default_header", { default_header: EVAL_HEADER }],
    ] as const) {
      const parsed = VerifierConfigSchema.safeParse({ repl });
      expect(parsed.success).toBe(false);
      expect(parsed.error!.issues.map((issue) => issue.path.join("."))).toEqual([key]);
      expect(parsed.error!.issues[0]!.message).toMatch(/^line 2 holds `#eval`/);
    }
  });
});
