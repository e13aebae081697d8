// examples/lean-proofs.jsonl through `lean-grpo verify` as a user runs it (the real
// bin, a verifier on loopback, the REPL stand-in as --repl-cmd): the honest proofs
// are PROVED, the bad ones REJECTED or ERROR with the reason that names what is wrong.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT, standIn, type StandIn } from "./support/stand-in.js";

const BIN = join(REPO_ROOT, "apps/lean-grpo/bin/lean-grpo.mjs");
const EXAMPLES = join(REPO_ROOT, "examples/lean-proofs.jsonl");
let dir: string;
let repl: StandIn;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "lean-examples-"));
  // What Lean answers for the honest proofs: no message, the theorem with its axioms.
  repl = standIn({
    rules: [
      { when: { cmd: { includes: ":= by simp" } }, declares: { axioms: ["propext"] } },
      { when: { cmd: { includes: "induction n with" } }, declares: { axioms: [] } },
      { when: { cmd: { includes: ":= ⟨h.2, h.1⟩" } }, declares: { axioms: [] } },
      { when: { cmd: { includes: ":= by decide" } }, declares: { axioms: [] } },
    ],
  });
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  repl.cleanup();
});

describe("examples/lean-proofs.jsonl", () => {
  it("proves the honest proofs and refuses the bad ones with the right reason", async () => {
    const input = join(dir, "lean-proofs.jsonl");
    copyFileSync(EXAMPLES, input);
    const inherited = { ...process.env };
    delete inherited.LEAN_REPL_CMD;
    delete inherited.LEAN_REPL_CWD;
    // The stand-ins read their rules where the sandbox would not let them (tests/security runs one sandboxed).
    inherited.LEANGRPO_VERIFIER_REPL__SANDBOX__MODE = "none";
    inherited.LOG_LEVEL = "error";
    const replCmd = repl.command.map((arg) => `'${arg}'`).join(" ");
    const replayCmd = repl.checker.command.map((arg) => `'${arg}'`).join(" ");
    const args = [BIN, "verify", input, "--repl-cmd", replCmd, "--repl-cwd", REPO_ROOT, "--pool-size", "1", "--replay-cmd", replayCmd];
    const child = spawn(process.execPath, args, {
      cwd: REPO_ROOT,
      env: inherited,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    child.stdout.resume();
    const [code] = await once(child, "exit");
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const results = readFileSync(join(dir, "lean-proofs.results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: string; verdict: string; reason: string; decided_by: string });
    const byId = Object.fromEntries(results.map((result) => [result.id, result]));
    for (const id of ["nat_add_zero", "nat_zero_add", "and_swap", "two_add_two"]) {
      expect(byId[id], id).toMatchObject({ verdict: "PROVED", decided_by: "replay" });
    }
    expect(byId.bad_sorry).toMatchObject({ verdict: "REJECTED", reason: expect.stringContaining("banned `sorry`") });
    expect(byId.bad_glued_eval).toMatchObject({ verdict: "REJECTED", reason: expect.stringContaining("banned `#eval`") });
    expect(byId.bad_char_theorem).toMatchObject({ verdict: "REJECTED", reason: expect.stringContaining("banned `theorem`") });
    expect(byId.bad_open_after).toMatchObject({ verdict: "REJECTED", reason: expect.stringContaining("a command (`open`)") });
    expect(byId.bad_native).toMatchObject({ verdict: "REJECTED", reason: expect.stringContaining("banned `native_decide`") });
    // Nothing refused reached Lean: only the header, its token-table query, and the four honest proofs with their axiom checks.
    const commands = repl.requests().filter((logged) => logged.request.kind === "command" && logged.request.env !== undefined);
    expect(commands).toHaveLength(9);
    // Each honest proof was replayed once, as the challenge (statement with sorry) and the solution the REPL accepted.
    const replays = repl.replays();
    expect(replays).toHaveLength(4);
    for (const replay of replays) {
      expect(replay.challenge).toMatch(/:= by\n {2}sorry\n$/);
      expect(replay.config.permitted_axioms.sort()).toEqual(["Classical.choice", "Quot.sound", "propext"]);
    }
  }, 120_000);
});
