// ReplProcess against real processes: the whole process group dies with it, and
// every way a REPL can misbehave fails the request in flight with a reason.
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@lean-grpo/kit";
import { ReplFailure, ReplUnavailable } from "../src/repl/repl-failure.js";
import { ReplProcess } from "../src/repl/repl-process.js";
import { REPO_ROOT, standIn, type StandIn } from "./support/stand-in.js";

const logger = createLogger("test");
const started: ReplProcess[] = [];
const standIns: StandIn[] = [];

function repl(argv: string[], maxResponseChars = 1 << 20): ReplProcess {
  const process_ = new ReplProcess({ argv, cwd: REPO_ROOT, env: process.env, maxResponseChars, logger });
  started.push(process_);
  return process_;
}

function script(rules: Parameters<typeof standIn>[0]): StandIn {
  const created = standIn(rules);
  standIns.push(created);
  return created;
}

afterEach(async () => {
  for (const process_ of started.splice(0)) {
    process_.kill(new ReplFailure("shutdown", "test over"));
    await process_.exited;
  }
  for (const created of standIns.splice(0)) created.cleanup();
});

/** Whether a pid is gone or a zombie (a container's init may not reap it at once). */
function dead(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return true;
  return readFileSync(stat, "utf8")
    .slice(readFileSync(stat, "utf8").lastIndexOf(")") + 2)
    .startsWith("Z");
}

describe("ReplProcess", () => {
  it("kills the whole process group on timeout, children included", async () => {
    const dir = mkdtempSync(join(tmpdir(), "repl-group-"));
    try {
      const child = repl(["sh", "-c", `sleep 300 & echo $! > ${dir}/child; wait`]);
      const failure = await child.send({ cmd: "import Mathlib" }, { deadline: Date.now() + 300 }).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(ReplFailure);
      expect(failure).toMatchObject({ kind: "timeout", message: "no answer before the deadline" });
      const exit = await child.exited;
      expect(exit.failure).toBe(failure);
      const grandchild = Number(readFileSync(`${dir}/child`, "utf8"));
      for (let i = 0; i < 50 && !dead(grandchild); i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(dead(grandchild)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("cancels (kills) when the call's signal aborts", async () => {
    const child = repl(["sh", "-c", "sleep 300"]);
    const controller = new AbortController();
    const pending = child.send({ cmd: "x" }, { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ kind: "cancel" });
    expect(child.ended).toBe(true);
  });

  it("reports a command that cannot be started as unavailable", async () => {
    const missing = repl(["/nonexistent/lean-repl"]);
    const exit = await missing.exited;
    expect(exit.failure).toBeInstanceOf(ReplUnavailable);
    expect(exit.failure.message).toMatch(/^the REPL could not be started: spawn \/nonexistent\/lean-repl ENOENT/);
    await expect(missing.send({ cmd: "x" })).rejects.toBeInstanceOf(ReplUnavailable);
  });

  it("takes one request at a time, as the REPL reads them", async () => {
    const stand = script({ rules: [{ when: { cmd: { includes: "slow" } }, fault: { kind: "slow", ms: 200 } }] });
    const child = repl(stand.command);
    const first = child.send({ cmd: "slow" });
    expect(() => child.send({ cmd: "x" })).toThrow("a request is already in flight");
    expect((await first).kind).toBe("command");
  });

  it("kills a REPL whose answer is larger than the limit", async () => {
    const stand = script({
      rules: [
        {
          when: { cmd: { includes: "flood" } },
          reply: { json: { messages: [{ severity: "info", pos: { line: 1, column: 0 }, data: "x".repeat(5000) }] } },
        },
      ],
    });
    const child = repl(stand.command, 1000);
    await expect(child.send({ cmd: "flood" })).rejects.toMatchObject({
      kind: "crash",
      message: "the REPL's response exceeded 1000 characters",
    });
  });

  it("kills a REPL that writes without being asked", async () => {
    const child = repl(["sh", "-c", "printf '{\"env\": 0}\\n\\n'; sleep 300"]);
    const exit = await child.exited;
    expect(exit.failure).toMatchObject({ kind: "crash", message: 'the REPL wrote output nobody asked for: {"env": 0}' });
  });

  it("kills a REPL that answers with an unknown shape", async () => {
    const stand = script({
      rules: [
        { when: { cmd: { includes: "by sorry" } }, reply: { json: { sorries: [{ proofState: 0, goal: "⊢ Nat" }] } } },
        { when: { tactic: { equals: "odd" } }, reply: { json: { goals: "not a list" } } },
      ],
    });
    const child = repl(stand.command);
    const start = await child.send({ cmd: "def f : Nat := by sorry" });
    expect(start).toMatchObject({ kind: "command", response: { sorries: [{ proofState: 0 }] } });
    await expect(child.send({ tactic: "odd", proofState: 0 })).rejects.toMatchObject({
      kind: "crash",
      message: expect.stringMatching(/^the REPL answered with an unknown response shape: \{ "goals": "not a list"/),
    });
  });

  it("never trusts an answer the REPL wrote right after a panic on stderr (the pipes' events come in either order)", async () => {
    // What Lean does on a panic: the message on stderr, then the answer on stdout, in that order.
    const panicThenAnswer = ["sh", "-c", `read request; echo 'PANIC at Lean.Expr' >&2; printf '{"env": 1}\\n\\n'; read more`];
    for (let attempt = 0; attempt < 40; attempt++) {
      const child = repl(panicThenAnswer);
      await expect(child.send({ cmd: "theorem t : True := trivial" }), `attempt ${attempt}`).rejects.toMatchObject({
        kind: "crash",
        message: "the REPL wrote to stderr: PANIC at Lean.Expr",
      });
    }
  });

  it("tolerates stderr noise before the first request (a launcher's warning), not after", async () => {
    const stand = script({ rules: [{ when: { cmd: { includes: "panic" } }, fault: { kind: "stderr", text: "PANIC" } }] });
    const noisy = repl(["sh", "-c", `echo 'warning: manifest out of date' >&2; exec ${stand.command.map((a) => `'${a}'`).join(" ")}`]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await noisy.send({ cmd: "import Mathlib" })).kind).toBe("command");
    await expect(noisy.send({ cmd: "panic", env: 0 })).rejects.toMatchObject({
      kind: "crash",
      message: "the REPL wrote to stderr: warning: manifest out of date PANIC",
    });
  });
});
