// `lean-grpo verify FILE.jsonl` as a user runs it: the real bin, a verifier started on
// loopback with the REPL of --repl-cmd (the stand-in), a verdict table on stdout and
// one JSON result per record.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { leanErrorReply, REPO_ROOT, standIn, type StandIn } from "./support/stand-in.js";

const BIN = join(REPO_ROOT, "apps/lean-grpo/bin/lean-grpo.mjs");
let dir: string;
let repl: StandIn;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "verify-cli-"));
  repl = standIn({
    rules: [
      { when: { cmd: { includes: "by norm_num" } }, declares: { axioms: ["propext"] } },
      // Lean's error sits in the proof (the tactic), as a real REPL reports it.
      {
        when: { cmd: { includes: "by linarith" } },
        reply: leanErrorReply(1, 36, 44, "linarith failed to find a contradiction\ncase a\n⊢ False failed"),
      },
      // A header without Mathlib: `Nat.Prime` in the statement is unknown, whatever the proof.
      {
        when: { cmd: { startsWith: "theorem prime_two : Nat.Prime 2 :=" } },
        reply: leanErrorReply(1, 20, 29, "unknown identifier 'Nat.Prime'"),
      },
      { when: { cmd: { includes: "lemma aux_wf" } }, declares: { axioms: ["propext"] } },
    ],
  });
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  repl.cleanup();
});

async function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const inherited = { ...process.env };
  delete inherited.LEAN_REPL_CMD;
  delete inherited.LEAN_REPL_CWD;
  delete inherited.LOG_LEVEL;
  const child = spawn(process.execPath, [BIN, "verify", ...args], {
    cwd: REPO_ROOT,
    // The stand-in reads its rules where the sandbox would not let it (tests/security runs it sandboxed);
    // the warning that mode none logs is tested there, not here.
    env: { ...inherited, LEANGRPO_VERIFIER_REPL__SANDBOX__MODE: "none", LOG_LEVEL: "error", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  const [code] = await once(child, "exit");
  return { code: code as number, stdout, stderr };
}

const replCmd = () => repl.command.map((arg) => `'${arg}'`).join(" ");
const replayCmd = () => repl.checker.command.map((arg) => `'${arg}'`).join(" ");

describe("lean-grpo verify", () => {
  it("prints a verdict table and writes one JSON result per record, in input order", async () => {
    const input = join(dir, "proofs.jsonl");
    const records = [
      { name: "mathd_1", statement: "theorem mathd_1 : (2 : ℕ) + 2 = 4", proof: "by norm_num", imports: ["Mathlib"] },
      { id: "x-2", formal_statement: "theorem mathd_2 : (1 : ℕ) < 2 := by\n", proof: "by linarith", header: "import Mathlib" },
      { name: "mathd_3", statement: "theorem mathd_3 : True", proof: "by sorry", imports: ["Mathlib"] },
    ];
    writeFileSync(input, `${records.map((record) => JSON.stringify(record)).join("\n")}\n\n`);
    const { code, stdout, stderr } = await run([
      input,
      "--repl-cmd",
      replCmd(),
      "--repl-cwd",
      REPO_ROOT,
      "--pool-size",
      "2",
      "--replay-cmd",
      replayCmd(),
    ]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^\s+#\s+name\s+verdict\s+decided by\s+ms\s+reason$/);
    const rows = lines.slice(1, 4).sort();
    expect(rows[0]).toMatch(/^\s+1\s+mathd_1\s+PROVED\s+replay\s+\d+\s+proved \(the kernel replay in a fresh process agrees\)$/);
    expect(rows[1]).toMatch(/^\s+2\s+x-2\s+ERROR\s+repl\s+\d+\s+linarith failed to find a contradiction \(at 1:36\)$/);
    expect(rows[2]).toMatch(/^\s+3\s+mathd_3\s+REJECTED\s+screen\s+\d+\s+banned `sorry` at proof 1:3/);
    expect(lines.at(-2)).toMatch(/^3 proofs: (PROVED 1|ERROR 1|REJECTED 1)(, (PROVED 1|ERROR 1|REJECTED 1)){2}$/);
    expect(lines.at(-1)).toBe(`results: ${join(dir, "proofs.results.jsonl")}`);

    const results = readFileSync(join(dir, "proofs.results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(results.map((result) => [result.id, result.verdict])).toEqual([
      ["mathd_1", "PROVED"],
      ["x-2", "ERROR"],
      ["mathd_3", "REJECTED"],
    ]);
    expect(results[0]).toMatchObject({ name: "mathd_1", axioms: ["propext"], errors: 0, decided_by: "replay" });
    expect(results[2]).toMatchObject({ decided_by: "screen" });
    expect(results[1]).toMatchObject({ errors: 1, theorem_error: "" });
  });

  it("says which records state a theorem that does not elaborate under their header", async () => {
    const input = join(dir, "no-header.jsonl");
    const records = [
      { name: "prime_two", statement: "theorem prime_two : Nat.Prime 2", proof: "by decide", imports: ["Init"] },
      { name: "mathd_1", statement: "theorem mathd_1 : (2 : ℕ) + 2 = 4", proof: "by norm_num", imports: ["Mathlib"] },
    ];
    writeFileSync(input, `${records.map((record) => JSON.stringify(record)).join("\n")}\n`);
    const { code, stdout, stderr } = await run([input, "--repl-cmd", replCmd(), "--repl-cwd", REPO_ROOT, "--replay-cmd", replayCmd()]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /\n\s+1\s+prime_two\s+ERROR\s+repl\s+\d+\s+the theorem does not elaborate under its header: 1:20: unknown identifier 'Nat.Prime'\n/,
    );
    expect(stdout).toContain(
      "\n1 record(s) state a theorem that does not elaborate under its header (first: prime_two: 1:20: unknown identifier 'Nat.Prime'): " +
        "no proof of them can be PROVED; give them the header or imports their statements need\n",
    );
    const results = readFileSync(join(dir, "no-header.results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(results[0]).toMatchObject({ verdict: "ERROR", theorem_error: "1:20: unknown identifier 'Nat.Prime'" });
    expect(results[1]).toMatchObject({ verdict: "PROVED", theorem_error: "" });
  });

  it("writes where --out says", async () => {
    const input = join(dir, "one.jsonl");
    writeFileSync(input, `${JSON.stringify({ statement: "theorem one : 1 = 1", proof: "by norm_num" })}\n`);
    const out = join(dir, "elsewhere.jsonl");
    const { code } = await run([input, "--out", out], { LEAN_REPL_CMD: replCmd(), LEAN_REPL_CWD: REPO_ROOT, LEAN_REPLAY_CMD: replayCmd() });
    expect(code).toBe(0);
    expect(JSON.parse(readFileSync(out, "utf8"))).toMatchObject({ verdict: "PROVED", decided_by: "replay" });
  });

  it("refuses to start a REPL without the replay checker, naming the keys, unless --replay off says so", async () => {
    const input = join(dir, "one.jsonl");
    const refused = await run([input, "--repl-cmd", replCmd(), "--repl-cwd", REPO_ROOT]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('repl.replay is "proved" but no replay checker is configured');
    expect(refused.stderr).toContain("repl.replay_checker.command");
    const out = join(dir, "repl-only.jsonl");
    const trusted = await run([input, "--repl-cmd", replCmd(), "--repl-cwd", REPO_ROOT, "--replay", "off", "--out", out]);
    expect(trusted.code).toBe(0);
    expect(JSON.parse(readFileSync(out, "utf8"))).toMatchObject({ verdict: "PROVED", decided_by: "repl" });
    const bad = await run([input, "--repl-cmd", replCmd(), "--replay", "sometimes"]);
    expect(bad.stderr).toContain('--replay: "sometimes" is not a mode; expected proved, always or off');
    // Three runs of the bin, each starting a verifier.
  }, 60_000);

  it("answers every record of a file mixing body proofs, whole files and refused records, one line each", async () => {
    const input = join(dir, "mixed.jsonl");
    const statement = "theorem add_zero_wf (n : Nat) : n + 0 = n";
    const file = `lemma aux_wf (n : Nat) : n + 0 = n := by simp\n\n${statement} := by\n  exact aux_wf n`;
    const records = [
      { name: "body", statement: "theorem body : (2 : ℕ) + 2 = 4", proof: "by norm_num", imports: ["Mathlib"] },
      { name: "add_zero_wf", statement, proof: file, imports: ["Mathlib"] },
      // The screen refuses the theorem itself: its own line, the rest still checked.
      { name: "hostile", statement: 'theorem hostile : True\n#eval IO.println "x"', proof: "trivial", imports: ["Mathlib"] },
      // A whole file whose theorem is restated weaker.
      {
        name: "add_zero_wf",
        statement,
        proof: `${statement.replace("(n : Nat)", "(n : Nat) (h : n = 0)")} := by simp`,
        imports: ["Mathlib"],
      },
      // No proof at all: the record cannot be sent.
      { name: "no_proof", statement: "theorem no_proof : True" },
      { name: "odd_format", statement: "theorem odd_format : True", proof: "trivial", proof_format: "sometimes" },
    ];
    writeFileSync(input, `${records.map((record) => JSON.stringify(record)).join("\n")}\n`);
    const { code, stdout, stderr } = await run([input, "--repl-cmd", replCmd(), "--repl-cwd", REPO_ROOT, "--replay-cmd", replayCmd()]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(/\n6 proofs: /);
    const results = readFileSync(join(dir, "mixed.results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(results.map((result) => [result.name, result.verdict, result.decided_by])).toEqual([
      ["body", "PROVED", "replay"],
      ["add_zero_wf", "PROVED", "replay"],
      ["hostile", "REJECTED", "screen"],
      ["add_zero_wf", "REJECTED", "screen"],
      ["no_proof", "REJECTED", "input"],
      ["odd_format", "REJECTED", "input"],
    ]);
    expect(results[2].reason.startsWith(`invalid record: ${input}:3: theorem.statement: `)).toBe(true);
    expect(results[3].reason).toMatch(/whole-file proof refused: the theorem's statement is not the dataset's/);
    expect(results[4].reason).toBe(`invalid record: ${input}:5: missing "proof": the proof body, e.g. "by simp", or a whole Lean file`);
    expect(results[5].reason).toMatch(/"proof_format" is "sometimes"; expected body, whole_file or auto/);
    // The body format reads the same file as a body, which the proof screen refuses.
    const asBody = await run([
      input,
      "--repl-cmd",
      replCmd(),
      "--replay-cmd",
      replayCmd(),
      "--proof-format",
      "body",
      "--out",
      join(dir, "as-body.jsonl"),
    ]);
    expect(asBody.code).toBe(0);
    const bodyResults = readFileSync(join(dir, "as-body.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(bodyResults[1]).toMatchObject({ verdict: "REJECTED", decided_by: "screen" });
    const bad = await run([input, "--repl-cmd", replCmd(), "--proof-format", "files"]);
    expect(bad.stderr).toContain('--proof-format: "files" is not a format; expected body, whole_file or auto');
  }, 90_000);

  it("says how to name a REPL when there is none", async () => {
    const input = join(dir, "one.jsonl");
    const { code, stderr } = await run([input]);
    expect(code).toBe(2);
    expect(stderr).toContain("lean-grpo: no Lean REPL: pass --repl-cmd");
  });
});
