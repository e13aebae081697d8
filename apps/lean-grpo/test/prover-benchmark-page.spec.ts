// Runs every command of docs/guide/prover-benchmark.md as written, in order, in a directory
// laid out as the page's reader has it (examples/minif2f-style.jsonl, prover.yaml). What the
// test swaps for stand-ins is only in prover.yaml: the model (a tiny random one whose
// vocabulary covers the theorems), the verifier's Lean (the REPL stand-in, which proves a
// proof with a digit in it and answers any other with an error), and sizes small enough for
// a test; `<run-id>` is the run the page's `train` made.
import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { registerEvalCommand } from "../src/commands/eval-command.js";
import { registerExportCommand } from "../src/commands/export-command.js";
import { registerRunsCommand } from "../src/commands/runs-command.js";
import { registerTrainCommand } from "../src/commands/train-command.js";
import { meshFixture, type MeshFixture } from "./support/mesh-fixture.js";
import { replStandIn, type ReplStandIn } from "./support/repl-stand-in.js";

const REPO = path.resolve(import.meta.dirname, "../../..");
const PAGE = path.join(REPO, "docs/guide/prover-benchmark.md");

let fixture: MeshFixture;
let repl: ReplStandIn;
let cwd: string;

/** The page's ```yaml block that starts with "# prover.yaml", and every `npx lean-grpo` line of its ```sh blocks. */
function pageParts(markdown: string): { config: Record<string, unknown>; commands: string[] } {
  const blocks = [...markdown.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, text: m[2]! }));
  const config = blocks.find((b) => b.lang === "yaml" && b.text.startsWith("# prover.yaml"));
  if (!config) throw new Error("the page has no prover.yaml block");
  const commands = blocks
    .filter((b) => b.lang === "sh")
    .flatMap((b) => b.text.split("\n"))
    .filter((line) => line.startsWith("npx lean-grpo "));
  return { config: YAML.parse(config.text) as Record<string, unknown>, commands };
}

async function run(command: string): Promise<string> {
  const words = command.replace(/^npx lean-grpo /, "").split(/\s+/);
  const program = new Command().exitOverride();
  registerEvalCommand(program);
  registerTrainCommand(program);
  registerRunsCommand(program);
  registerExportCommand(program);
  const printed: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => {
    printed.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    await program.parseAsync(words, { from: "user" });
  } finally {
    process.stdout.write = write;
  }
  return printed.join("");
}

beforeAll(async () => {
  cwd = process.cwd();
  const data = path.join(REPO, "examples/minif2f-style.jsonl");
  fixture = await meshFixture({ extraChars: [...new Set(await readFile(data, "utf8"))].join("") });
  repl = replStandIn(
    {
      rules: [
        { when: { cmd: { regex: ":= by[^]*[0-9]" } }, declares: { axioms: ["propext"] } },
        {
          when: { cmd: { includes: ":= by" } },
          reply: { json: { messages: [{ severity: "error", pos: { line: 9, column: 2 }, data: "unsolved goals" }], env: 0 } },
        },
      ],
    },
    3,
  );
  await mkdir(path.join(fixture.dir, "examples"));
  await copyFile(data, path.join(fixture.dir, "examples/minif2f-style.jsonl"));
  process.chdir(fixture.dir);
}, 60_000);
afterAll(async () => {
  process.chdir(cwd);
  repl?.cleanup();
  await fixture?.cleanup();
});

describe("docs/guide/prover-benchmark.md", () => {
  it("every command runs as written, from the base model's pass@k to a merged model", async () => {
    const { config, commands } = pageParts(await readFile(PAGE, "utf8"));
    expect(commands.map((c) => c.split(" ").slice(0, 3).join(" "))).toEqual([
      "npx lean-grpo eval",
      "npx lean-grpo train",
      "npx lean-grpo runs",
      "npx lean-grpo eval",
      "npx lean-grpo export",
    ]);
    const page = config as {
      model: Record<string, unknown>;
      training: Record<string, unknown>;
      eval: Record<string, unknown>;
      services: { verifier: { repl: Record<string, unknown> } };
    };
    // The page's settings, with the stand-ins and test sizes in place of the real model, Lean and run length.
    await writeFile(
      "prover.yaml",
      YAML.stringify({
        ...page,
        model: { ...page.model, dir: fixture.modelDir },
        training: { ...page.training, steps: 2, batch_size: 2, num_generations: 2, max_tokens: 8, checkpoint_every: 2 },
        services: {
          ...page.services,
          inference: { embedded: { tensor_backend: "cpu" }, limits: { max_n: 16 } },
          learner: { backend: "cpu", lora: { rank: 2, alpha: 4 }, optimizer: { learning_rate: 1e-2 } },
          // The replay runs a process per PROVED; the verifier's own tests cover it.
          verifier: { ...repl.verifierSection, repl: { ...(repl.verifierSection.repl as object), replay: "off" } },
        },
      }),
    );

    const [baseEval, train, list, runEval, exportMerged] = commands as [string, string, string, string, string];
    const base = JSON.parse(await run(baseEval)) as { pass_at: { k: number }[]; samples: number };
    expect(base.pass_at.map((p) => p.k)).toEqual([1, 8, 32]);
    expect((await readFile("base-completions.jsonl", "utf8")).trim().split("\n")).toHaveLength(2);

    await run(train);
    const [runId] = await readdir("runs");
    expect(runId).toBeDefined();
    // The run's held-out evaluations sampled 8 per theorem and recorded pass@1 and pass@8.
    const evals = (await readFile(path.join("runs", runId!, "eval.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { step: number; samples?: number; pass_at?: Record<string, number> });
    expect(evals.map((e) => e.step)).toEqual([0, 2]);
    for (const e of evals) {
      expect(e.samples).toBe(8);
      expect(Object.keys(e.pass_at!)).toEqual(["1", "8"]);
    }

    expect(await run(list)).toContain(runId);
    const trained = JSON.parse(await run(runEval.replace("<run-id>", runId!))) as { evaluated: string; pass_at: { k: number }[] };
    expect(trained.evaluated).toContain(path.join(runId!, "adapters", "policy-v"));
    expect(trained.pass_at.map((p) => p.k)).toEqual([1, 8, 32]);
    expect((await readFile("rl-completions.jsonl", "utf8")).trim().split("\n")).toHaveLength(2);

    expect(await run(exportMerged.replace("<run-id>", runId!))).toContain(`merged into ${fixture.modelDir}`);
    expect((await readdir("models/prover-grpo")).sort()).toEqual(
      expect.arrayContaining(["config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]),
    );
  }, 1_200_000);
});
