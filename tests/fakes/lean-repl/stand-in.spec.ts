// The REPL stand-in speaks the REPL's protocol: it replays the recorded transcripts
// byte for byte, keeps env and proof-state ids as the REPL does, and misbehaves on
// request. Driven here through raw pipes, independently of the verifier's client.
import { afterEach, describe, expect, it } from "vitest";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RulesFile } from "./rules.js";
import { loadTranscripts, TRANSCRIPTS_DIR } from "./transcripts.js";

const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));
const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const children: ChildProcessWithoutNullStreams[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function start(args: string[]): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN, ...args], { cwd: REPO_ROOT });
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  children.push(child);
  return child;
}

function withRules(script: RulesFile): ChildProcessWithoutNullStreams {
  const dir = mkdtempSync(join(tmpdir(), "stand-in-spec-"));
  dirs.push(dir);
  writeFileSync(join(dir, "rules.json"), JSON.stringify(script));
  return start(["--rules", join(dir, "rules.json")]);
}

/** A minimal REPL client: one request, then text up to the blank line that ends the answer. */
class Session {
  private buffer = "";
  private waiters: (() => void)[] = [];
  stderr = "";
  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.on("data", (chunk: string) => {
      this.buffer += chunk;
      for (const wake of this.waiters.splice(0)) wake();
    });
    child.stderr.on("data", (chunk: string) => (this.stderr += chunk));
  }

  async ask(request: unknown, withinMs = 10_000): Promise<Record<string, unknown>> {
    this.child.stdin.write(`${JSON.stringify(request)}\n\n`);
    return JSON.parse(await this.answer(withinMs)) as Record<string, unknown>;
  }

  async answer(withinMs: number): Promise<string> {
    const deadline = Date.now() + withinMs;
    for (;;) {
      const end = this.buffer.indexOf("\n\n");
      if (end >= 0) {
        const text = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        return text;
      }
      if (Date.now() > deadline) throw new Error(`no answer within ${withinMs} ms (got ${JSON.stringify(this.buffer)})`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 20);
      });
    }
  }

  get pending(): string {
    return this.buffer;
  }
}

describe("replay mode", () => {
  it("answers every recorded request with the recorded answer, byte for byte", async () => {
    const transcripts = loadTranscripts();
    const files = transcripts.map((t) => `${TRANSCRIPTS_DIR}${t.name}.in`);
    const child = start(files.flatMap((file) => ["--replay", file]));
    let stdout = "";
    child.stdout.on("data", (chunk: string) => (stdout += chunk));
    // Fed exactly as recorded, one transcript after another.
    child.stdin.end(files.map((file) => readFileSync(file, "utf8")).join("\n\n"));
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
    const expected = transcripts.map((t) => readFileSync(`${TRANSCRIPTS_DIR}${t.name}.expected.out`, "utf8").trim()).join("\n\n");
    expect(stdout.trim()).toBe(expected);
  });

  it("exits with a message when a request is not the recorded one", async () => {
    const child = start(["--replay", `${TRANSCRIPTS_DIR}tactic_sorry.in`]);
    let stderr = "";
    child.stderr.on("data", (chunk: string) => (stderr += chunk));
    child.stdin.end('{"cmd": "def g := 1"}\n\n');
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(stderr).toContain("request #1 is not the one recorded");
  });
});

describe("rules mode", () => {
  const script: RulesFile = {
    rules: [
      { when: { cmd: { includes: "by simp" } }, declares: { axioms: ["propext", "Classical.choice"] } },
      { when: { cmd: { includes: "by sorry" } }, reply: { transcript: "proof_step", response: 0 } },
      { when: { tactic: { equals: "apply Int.natAbs" } }, reply: { transcript: "proof_step", response: 1 } },
      { when: { tactic: { equals: "bad" } }, reply: { json: { message: "Lean error:\n<input>:1:1: unknown tactic" } } },
    ],
  };

  it("keeps env and proof-state ids as the REPL does, and answers #print axioms from what rules declared", async () => {
    const repl = new Session(withRules(script));
    expect(await repl.ask({ cmd: "import Mathlib" })).toEqual({ env: 0 });
    expect(await repl.ask({ cmd: "theorem t : 1 = 1 := by simp", env: 0 })).toEqual({ env: 1 });
    expect(await repl.ask({ cmd: "#print axioms t", env: 1 })).toEqual({
      messages: [
        {
          severity: "info",
          pos: { line: 1, column: 0 },
          endPos: { line: 1, column: 6 },
          data: "'t' depends on axioms: [propext, Classical.choice]",
        },
      ],
      env: 2,
    });
    // On the header's env the theorem does not exist.
    const missing = await repl.ask({ cmd: "#print axioms t", env: 0 });
    expect((missing.messages as { severity: string; data: string }[])[0]).toMatchObject({
      severity: "error",
      data: "Unknown constant `t`",
    });
    expect(await repl.ask({ cmd: "theorem u : 1 = 1 := by simp", env: 99 })).toEqual({ message: "Unknown environment." });

    const opened = await repl.ask({ cmd: "def f : Nat := by sorry", env: 0 });
    expect(opened.env).toBe(4);
    expect((opened.sorries as { proofState: number }[])[0]!.proofState).toBe(0);
    expect(await repl.ask({ tactic: "apply Int.natAbs", proofState: 0 })).toEqual({
      proofStatus: "Incomplete: open goals remain",
      proofState: 1,
      goals: ["⊢ Int"],
    });
    expect(await repl.ask({ tactic: "bad", proofState: 1 })).toEqual({ message: "Lean error:\n<input>:1:1: unknown tactic" });
    expect(await repl.ask({ tactic: "apply Int.natAbs", proofState: 7 })).toEqual({ message: "Unknown proof state." });
  });

  it("skips queries that look like comments, as the REPL does", async () => {
    const repl = new Session(withRules(script));
    repl.child.stdin.write("# a comment\n\n-- another\n\n");
    expect(await repl.ask({ cmd: "import Mathlib" })).toEqual({ env: 0 });
  });

  it("dies like the REPL on input it cannot parse or a request no rule answers", async () => {
    for (const input of ['{"cmd": \n\n', '{"nothing": 1}\n\n', '{"cmd": "theorem x := by omega", "env": 0}\n\n']) {
      const child = withRules(script);
      let stderr = "";
      child.stderr.on("data", (chunk: string) => (stderr += chunk));
      child.stdin.write('{"cmd": "import Mathlib"}\n\n');
      child.stdin.write(input);
      const [code] = await once(child, "exit");
      expect(code, input).toBe(1);
      expect(stderr, input).toMatch(/^uncaught exception: /);
    }
  });
});

describe("faults", () => {
  const faulty: RulesFile = {
    rules: [
      { when: { cmd: { equals: "slow" } }, fault: { kind: "slow", ms: 300 } },
      { when: { cmd: { equals: "hang" } }, fault: { kind: "hang" } },
      { when: { cmd: { equals: "crash" } }, reply: { transcript: "calc", response: 0 }, fault: { kind: "crash" } },
      { when: { cmd: { equals: "garbage" } }, fault: { kind: "garbage", text: "not json" } },
      { when: { cmd: { equals: "grow" } }, fault: { kind: "grow", mb: 64 } },
      { when: { cmd: { equals: "panic" } }, fault: { kind: "stderr", text: "PANIC at x" } },
    ],
  };

  const rss = (pid: number) => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;

  it("slow answers late; grow keeps memory; stderr writes before answering", async () => {
    const repl = new Session(withRules(faulty));
    const started = Date.now();
    expect(await repl.ask({ cmd: "slow", env: undefined })).toEqual({ env: 0 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    const before = rss(repl.child.pid!);
    expect(await repl.ask({ cmd: "grow" })).toEqual({ env: 1 });
    expect(rss(repl.child.pid!) - before).toBeGreaterThan(60 * 1024 * 1024);
    expect(await repl.ask({ cmd: "panic" })).toEqual({ env: 2 });
    expect(repl.stderr).toBe("PANIC at x\n");
  });

  it("hang never answers, and the process leaves at end of input", async () => {
    const repl = new Session(withRules(faulty));
    await expect(repl.ask({ cmd: "hang" }, 300)).rejects.toThrow("no answer within 300 ms");
    repl.child.stdin.end();
    const [code] = await once(repl.child, "exit");
    expect(code).toBe(0);
  });

  it("crash writes half an answer, then exits", async () => {
    const repl = new Session(withRules(faulty));
    repl.child.stdin.write('{"cmd": "crash"}\n\n');
    const [code] = await once(repl.child, "exit");
    expect(code).toBe(1);
    expect(repl.pending.length).toBeGreaterThan(100);
    expect(() => JSON.parse(repl.pending)).toThrow();
  });

  it("garbage is framed like an answer but is not JSON", async () => {
    const repl = new Session(withRules(faulty));
    repl.child.stdin.write('{"cmd": "garbage"}\n\n');
    expect(await repl.answer(5_000)).toBe("not json");
  });
});
