// When no REPL can check anything, calls say why with UNAVAILABLE (and the config key
// to fix), without waiting for their deadline; a header Lean refuses is the caller's
// INVALID_ARGUMENT.
import { describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { REPO_ROOT, standIn } from "./support/stand-in.js";
import { rejection, startVerifier } from "./support/verifier-harness.js";

const theorem = { name: "t", statement: "theorem t : True", imports: ["Mathlib"] };

describe("without a REPL", () => {
  it("starts, answers UNAVAILABLE naming repl.command and LEAN_REPL_CMD, and still refuses banned proofs", async () => {
    const harness = await startVerifier({ repl: { command: [] } }, {});
    try {
      const error = await rejection(harness.client.verify({ theorem, proof: "trivial" }));
      expect(error.code).toBe(Code.Unavailable);
      expect(error.rawMessage).toContain("no Lean REPL is configured: set repl.command");
      expect(error.rawMessage).toContain("LEAN_REPL_CMD");
      expect((await rejection(harness.client.startProof({ theorem }))).code).toBe(Code.Unavailable);
      // Refusing needs no Lean.
      expect((await harness.client.verify({ theorem, proof: "by sorry" })).verdict).toBe(Verdict.REJECTED);
      const stats = await harness.client.poolStats({});
      expect(stats.workers).toBe(0);
      expect(stats.verdicts.REJECTED).toBe(1n);
    } finally {
      await harness.close();
    }
  });

  it("uses LEAN_REPL_CMD when repl.command is empty", async () => {
    const repl = standIn({ rules: [{ when: { cmd: { includes: "trivial" } }, declares: { axioms: [] } }] });
    const harness = await startVerifier(
      { repl: { command: [], cwd: undefined } },
      { LEAN_REPL_CMD: repl.command.map((a) => `'${a}'`).join(" "), LEAN_REPL_CWD: REPO_ROOT },
    );
    try {
      expect((await harness.client.verify({ theorem, proof: "trivial" })).verdict).toBe(Verdict.PROVED);
    } finally {
      await harness.close();
      repl.cleanup();
    }
  });
});

describe("a REPL that cannot run", () => {
  it("a command that is not on PATH: UNAVAILABLE at once", async () => {
    const harness = await startVerifier({ repl: { command: ["/nonexistent/lean/repl"] } });
    try {
      const started = Date.now();
      const error = await rejection(harness.client.verify({ theorem, proof: "trivial" }));
      expect(error.code).toBe(Code.Unavailable);
      expect(error.rawMessage).toBe(
        "the REPL could not be started: /nonexistent/lean/repl is not an executable file (repl.command, searched on PATH)",
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      // Later calls too, without waiting.
      expect((await rejection(harness.client.verify({ theorem, proof: "trivial" }))).code).toBe(Code.Unavailable);
    } finally {
      await harness.close();
    }
  });

  it("a working directory that does not exist: UNAVAILABLE naming repl.cwd", async () => {
    const harness = await startVerifier({ repl: { command: ["lake", "env", "repl"], cwd: "/nonexistent/mathlib4" } });
    try {
      const error = await rejection(harness.client.verify({ theorem, proof: "trivial" }));
      expect(error.code).toBe(Code.Unavailable);
      expect(error.rawMessage).toBe("the REPL's working directory /nonexistent/mathlib4 does not exist (repl.cwd)");
    } finally {
      await harness.close();
    }
  });

  it("a REPL that dies before answering anything (e.g. lake cannot find it): UNAVAILABLE with its stderr", async () => {
    const harness = await startVerifier({
      repl: { command: ["sh", "-c", "sleep 0.2; echo 'error: unknown executable repl' >&2; exit 3"] },
    });
    try {
      const error = await rejection(harness.client.verify({ theorem, proof: "trivial" }));
      expect(error.code).toBe(Code.Unavailable);
      expect(error.rawMessage).toMatch(/^the REPL died before answering its first request: .*error: unknown executable repl/);
    } finally {
      await harness.close();
    }
  });

  it("a header Lean refuses: INVALID_ARGUMENT naming the header, Lean's words not echoed; the worker keeps serving", async () => {
    const repl = standIn({
      rules: [
        {
          when: { cmd: { equals: "import Nope" }, env: "none" },
          reply: {
            json: {
              messages: [
                // What a header could make Lean quote: here, as if it held a secret read from a file.
                {
                  severity: "error",
                  pos: { line: 1, column: 0 },
                  endPos: { line: 1, column: 11 },
                  data: "unknown module prefix 'Nope' SECRET=hunter2",
                },
              ],
            },
          },
        },
        { when: { cmd: { includes: "trivial" } }, declares: { axioms: [] } },
      ],
    });
    const harness = await startVerifier({ repl: { command: repl.command } });
    try {
      const error = await rejection(harness.client.verify({ theorem: { ...theorem, imports: ["Nope"] }, proof: "trivial" }));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toBe(
        "theorem.header (or theorem.imports): Lean could not elaborate the header; check that every imported module exists in the verifier's Lean project (details are in the verifier's log)",
      );
      expect(error.rawMessage).not.toContain("hunter2");
      expect((await harness.client.verify({ theorem, proof: "trivial" })).verdict).toBe(Verdict.PROVED);
      expect((await harness.client.poolStats({})).restarts).toEqual({});
    } finally {
      await harness.close();
      repl.cleanup();
    }
  });
});
