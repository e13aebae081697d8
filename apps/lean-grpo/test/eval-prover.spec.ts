// `lean-grpo eval --k 1,8,32` as a prover lab runs it: miniF2F-style theorems
// (examples/minif2f-style.jsonl), 32 samples per theorem with top-p and top-k, the Lean
// verifier on the REPL stand-in (tests/fakes/lean-repl: a proof with a digit in it elaborates
// and is declared, any other gets Lean's "unsolved goals" error), and the inference service
// taking at most 8 completions per Generate, so every theorem's 32 are sampled in 4 calls.
// The pass@k figures are checked against the per-theorem counts of the --out file with exact
// rational arithmetic (BigInt binomials), not with the estimator under test.
import { copyFile, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evalReportText, registerEvalCommand } from "../src/commands/eval-command.js";
import type { ProblemLine } from "../src/eval/completions-file.js";
import type { EvalResult } from "../src/eval/evaluate-through-orchestrator.js";
import { meshFixture, type MeshFixture } from "./support/mesh-fixture.js";
import { replStandIn, type ReplStandIn } from "./support/repl-stand-in.js";

const REPO = path.resolve(import.meta.dirname, "../../..");
const DATA = path.join(REPO, "examples/minif2f-style.jsonl");

let fixture: MeshFixture;
let repl: ReplStandIn;
let cwd: string;

beforeAll(async () => {
  cwd = process.cwd();
  // The tiny model's vocabulary must hold every character of the prompts (Lean's Unicode included).
  fixture = await meshFixture({ extraChars: [...new Set(await readFile(DATA, "utf8"))].join("") });
  repl = replStandIn(
    {
      rules: [
        // A proof (what follows ":= by") with a digit in it elaborates and declares the theorem.
        { when: { cmd: { regex: ":= by[^]*[0-9]" } }, declares: { axioms: ["propext"] } },
        {
          when: { cmd: { includes: ":= by" } },
          reply: {
            json: {
              messages: [
                { severity: "error", pos: { line: 9, column: 2 }, endPos: { line: 9, column: 9 }, data: "unsolved goals\n⊢ False" },
              ],
              env: 0,
            },
          },
        },
      ],
    },
    3,
  );
  // The mesh started here reads files under the working directory, as a lab's shell in its project.
  await copyFile(DATA, path.join(fixture.dir, "minif2f-style.jsonl"));
  process.chdir(fixture.dir);
}, 60_000);
afterAll(async () => {
  process.chdir(cwd);
  repl?.cleanup();
  await fixture?.cleanup();
});

/** Exact 1 − C(n−c, k)/C(n, k) as a float, from BigInt binomials (independent of pass-at-k.ts's product). */
function exactPassAtK(n: number, c: number, k: number): number {
  const choose = (a: number, b: number): bigint => {
    if (b < 0 || b > a) return 0n;
    let result = 1n;
    for (let i = 1; i <= b; i++) result = (result * BigInt(a - b + i)) / BigInt(i);
    return result;
  };
  const scale = 10n ** 30n;
  return 1 - Number((choose(n - c, k) * scale) / choose(n, k)) / Number(scale);
}

describe("lean-grpo eval --k 1,8,32 on miniF2F-style theorems", () => {
  it("prints pass@1, pass@8 and pass@32 from one set of 32 samples and writes every completion with its verdict", async () => {
    const config = "prover.yaml";
    // JSON is YAML: the train config a lab would write, as the test writes it.
    await writeFile(
      config,
      JSON.stringify({
        model: { dir: fixture.modelDir },
        services: {
          inference: { embedded: { tensor_backend: "cpu" }, limits: { max_n: 8 } },
          // The replay runs a process per PROVED; the verifier's own tests cover it.
          verifier: { ...repl.verifierSection, repl: { ...(repl.verifierSection.repl as object), replay: "off" } },
        },
      }),
    );
    const out = "completions.jsonl";
    const printed: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => {
      printed.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      const program = new Command().exitOverride();
      registerEvalCommand(program);
      await program.parseAsync(
        [
          "eval",
          "minif2f-style.jsonl",
          "--k",
          "1,8,32",
          "--samples",
          "32",
          "--top-p",
          "0.95",
          "--top-k",
          "40",
          "--max-tokens",
          "8",
          "--out",
          out,
          "--config",
          config,
          "--runs-dir",
          fixture.runsDir,
        ],
        { from: "user" },
      );
    } finally {
      process.stdout.write = write;
    }
    // Not a TTY here: the report is printed as JSON.
    const report = JSON.parse(printed.join("")) as EvalResult;
    expect(report.samples).toBe(32);
    expect(report.greedy).toBe(false);
    expect(report.pass_at.map((p) => p.k)).toEqual([1, 8, 32]);
    const text = evalReportText(report, out);
    for (const k of [1, 8, 32]) expect(text).toMatch(new RegExp(`^pass@${k} +\\d+\\.\\d%$`, "m"));

    const lines = (await readFile(out, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as ProblemLine);
    expect(lines.map((l) => l.id).sort()).toEqual(["percent_difference", "sum_squares_mod_ten"]);
    for (const line of lines) {
      expect(line.completions).toHaveLength(32);
      expect(line.solved).toBe(line.completions.filter((c) => c.solved).length);
      for (const completion of line.completions) {
        // A completion with no proof text in it (the tiny model writes some) never reaches Lean, and says so.
        if (completion.verdict === undefined) expect(completion.reason).toBe("no proof found in the completion");
        // What the stand-in decides: a digit in the proof proves it; any other proof that reaches Lean gets its error.
        if (completion.verdict === "PROVED") expect(completion.text).toMatch(/[0-9]/);
        if (completion.verdict === "ERROR") expect(completion.first_error).toBe("9:2: unsolved goals\n⊢ False");
      }
    }
    // Sampled, not 32 copies: the four Generate calls per theorem were seeded apart.
    for (const line of lines) expect(new Set(line.completions.map((c) => c.text)).size).toBeGreaterThan(8);
    // The figures, from the file's counts by exact arithmetic.
    for (const { k, value } of report.pass_at) {
      const expected = lines.reduce((sum, l) => sum + exactPassAtK(l.samples, l.solved, k), 0) / lines.length;
      expect(value).toBeCloseTo(expected, 12);
    }
    // Most completions reach Lean.
    expect(lines.flatMap((l) => l.completions).filter((c) => c.verdict !== undefined).length).toBeGreaterThan(32);
    // Some proofs pass and some fail, so the three figures say something.
    const solved = lines.reduce((n, l) => n + l.solved, 0);
    expect(solved).toBeGreaterThan(0);
    expect(solved).toBeLessThan(64);
  }, 180_000);

  it("refuses a k above the samples before starting anything", async () => {
    const program = new Command().exitOverride();
    registerEvalCommand(program);
    await expect(program.parseAsync(["eval", DATA, "--k", "1,8,32", "--samples", "16"], { from: "user" })).rejects.toThrow(
      "--k 32 is larger than --samples 16: pass@k needs at least k completions per problem; give --samples 32 or more",
    );
    await expect(program.parseAsync(["eval", DATA, "--k", "1,,8"], { from: "user" })).rejects.toThrow(
      '--k is "1,,8"; it must be integers >= 1 separated by commas, e.g. 1,8,32',
    );
    await expect(program.parseAsync(["eval", DATA, "--top-p", "1.5"], { from: "user" })).rejects.toThrow(
      '--top-p is "1.5"; it must be a number in (0, 1]',
    );
  });
});
