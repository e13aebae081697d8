// Every preset in configs/algorithm/ and configs/train/ loads as a `lean-grpo train --config`
// file, and its algorithm knobs are accepted by the real learner: one step of each on the mesh.
// A train preset's step also runs as the preset says (training.mode, async, the prompt) on the
// dataset of its `Use:` line; a tactic-mode preset on a REPL stand-in as its verifier's REPL.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OrchestratorService, RunState, type Run } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createServiceClient, loadConfig } from "@lean-grpo/kit";
import { TrainFileSchema } from "../src/commands/train-file.js";
import { trainRunConfig } from "../src/commands/train-config.js";
import { ALGORITHM_NAMES } from "@lean-grpo/learner";
import { RunConfigSchema, type StepRecord } from "@lean-grpo/orchestrator";
import type { RunningMesh } from "../src/mesh/start-mesh.js";
import { SERVICE_CATALOG } from "../src/mesh/service-catalog.js";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";
import { replStandIn, type Rule } from "./support/repl-stand-in.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const configs = path.join(root, "configs");
const yamlIn = (dir: string) =>
  readdirSync(path.join(configs, dir))
    .filter((f) => f.endsWith(".yaml"))
    .sort();
/** A preset as `lean-grpo train --config` loads it, with its run sections as the orchestrator resolves them. */
function loadPreset(file: string) {
  const train = loadConfig(TrainFileSchema, { file });
  // What the CLI sends: throws on a key the typed run config has no place for.
  trainRunConfig(train);
  const { model, runs_dir: _runsDir, services, dataset: _dataset, logging: _logging, ...sections } = train;
  return { model, services, ...RunConfigSchema.parse(sections) };
}
type TrainFile = ReturnType<typeof loadPreset>;

let fixture: MeshFixture;
let mesh: RunningMesh;
beforeAll(async () => {
  fixture = await meshFixture();
  mesh = await fixture.start();
}, 60_000);
afterAll(async () => {
  await mesh?.shutdown();
  await fixture?.cleanup();
});

/**
 * One step with the preset's algorithm section and reward, on the tiny test model (`mesh`
 * by default). `options.training` and `options.prompt` add the preset's run-shaping keys.
 */
async function oneStep(
  runId: string,
  file: TrainFile,
  options: {
    on?: RunningMesh;
    dataset?: string;
    steps?: number;
    training?: Record<string, unknown>;
    prompt?: Record<string, unknown>;
  } = {},
): Promise<Run> {
  const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [(options.on ?? mesh).urls.orchestrator!] });
  try {
    await client.startRun({
      datasetPath: options.dataset ?? fixture.dataset,
      runId,
      config: {
        algorithm: file.algorithm as never,
        reward: file.reward as never,
        training: tinyTraining(options.steps ?? 1, { dynamic_sampling: file.training.dynamic_sampling, ...options.training }),
        prompt: (options.prompt ?? {}) as never,
      },
    });
    let final: Run | undefined;
    for await (const event of client.watchRun({ runId })) if (event.event.case === "stateChange") final = event.event.value;
    return final!;
  } finally {
    transport.close();
  }
}

async function readSteps(run: Run): Promise<StepRecord[]> {
  return (await readFile(path.join(run.outputDir, "metrics.jsonl"), "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as StepRecord);
}

/** The dataset of a preset's `# Use: lean-grpo train DATA --config configs/train/NAME` line. */
function useLineDataset(name: string): string {
  const text = readFileSync(path.join(configs, "train", name), "utf8");
  const use = new RegExp(`^# Use: lean-grpo train (\\S+) --config configs/train/${name.replace(".", "\\.")}\\b`, "m").exec(text);
  expect(use, `${name}: a "# Use: lean-grpo train DATA --config configs/train/${name}" line`).not.toBeNull();
  const dataset = path.join(root, use![1]!);
  expect(existsSync(dataset), `${name}: ${use![1]} exists`).toBe(true);
  return dataset;
}

/**
 * One tactic-mode step of a preset on its Lean dataset: a mesh whose tiny model reads Lean
 * text and whose verifier's REPL is the stand-in, opening every theorem of the dataset; a
 * tactic starting with a digit closes the goal, a lowercase letter leaves one, anything
 * else is unknown, and an assembled proof is proved when its last tactic starts with 0-4.
 */
async function oneTacticStep(runId: string, file: TrainFile, dataset: string): Promise<{ run: Run; lines: StepRecord[]; tactics: number }> {
  const theorems = (await readFile(dataset, "utf8"))
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { statement: string; context?: string });
  const opens: Rule[] = theorems.map(({ statement, context }) => {
    const head = `${context ? `${context}\n` : ""}${statement} := by `;
    const lines = head.split("\n");
    const pos = { line: lines.length, column: [...lines.at(-1)!].length };
    return {
      when: { cmd: { equals: `${head}sorry` } },
      reply: {
        json: {
          sorries: [{ proofState: 0, pos, goal: "⊢ goal", endPos: { line: pos.line, column: pos.column + 5 } }],
          messages: [
            {
              severity: "warning",
              pos: { line: pos.line, column: 8 },
              endPos: { line: pos.line, column: 12 },
              data: "declaration uses `sorry`",
            },
          ],
          env: 0,
        },
      },
    };
  });
  const rules: Rule[] = [
    ...opens,
    { when: { cmd: { regex: "\\n  [0-4][^\\n]*$" } }, declares: { axioms: [] } },
    { when: { cmd: { includes: "theorem " } } },
    { when: { tactic: { regex: "^[0-9]" } }, reply: { json: { proofStatus: "Completed", proofState: 0, goals: [] } } },
    {
      when: { tactic: { regex: "^[a-z]" } },
      reply: { json: { proofStatus: "Incomplete: open goals remain", proofState: 0, goals: ["⊢ goal"] } },
    },
    { when: { tactic: { regex: "" } }, reply: { transcript: "unknown_tactic", response: 1 } },
  ];
  const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("");
  const lean = await meshFixture({ extraChars: `${ascii}∧→⊢` });
  const repl = replStandIn({ rules });
  try {
    const leanMesh = await lean.start({ verifier: repl.verifierSection });
    try {
      const run = await oneStep(runId, file, {
        on: leanMesh,
        dataset,
        training: { mode: file.training.mode, max_proof_steps: file.training.max_proof_steps, async: file.training.async },
        // The tiny model's context is 256 tokens: a short prompt rather than the preset's.
        prompt: { format: file.prompt.format, tactic_template: "{statement}\n{proof}{goals}\n" },
      });
      const lines = await readSteps(run);
      return { run, lines, tactics: repl.requests().filter((r) => r.kind === "tactic").length };
    } finally {
      await leanMesh.shutdown();
    }
  } finally {
    repl.cleanup();
    await lean.cleanup();
  }
}

describe("configs/algorithm", () => {
  it("has one preset per algorithm", () => {
    expect(yamlIn("algorithm")).toEqual([...ALGORITHM_NAMES].sort().map((name) => `${name}.yaml`));
  });

  for (const name of ALGORITHM_NAMES) {
    it(`${name}.yaml loads, names ${name}, and the learner accepts its knobs`, async () => {
      const file = loadPreset(path.join(configs, "algorithm", `${name}.yaml`));
      expect(file.algorithm.name).toBe(name);
      expect(Object.keys(file.algorithm.config).length).toBeGreaterThan(0);
      const run = await oneStep(`preset-${name}`, file);
      expect(run.error).toBe("");
      expect(run.state).toBe(RunState.COMPLETED);
    }, 60_000);
  }
});

describe("configs/train", () => {
  for (const name of yamlIn("train")) {
    it(`${name} loads, names an existing dataset, and runs a step as it says`, async () => {
      const file = loadPreset(path.join(configs, "train", name));
      const dataset = useLineDataset(name);
      const tactic = file.training.mode === "tactic";
      // The shipped tiny model's 147-character vocabulary cannot encode Lean's Unicode (∀ ℕ ⊢):
      // a tactic-mode preset names another model; every other one trains the shipped model.
      if (tactic) expect(file.model.dir).not.toBe("models/arith-tiny");
      else expect(file.model.dir).toBe("models/arith-tiny");
      // Service sections are validated by each service's own schema when the mesh starts.
      for (const [service, section] of Object.entries(file.services)) {
        const entry = SERVICE_CATALOG.find((e) => e.name === service);
        expect(entry, `services.${service}`).toBeDefined();
        expect(() => loadConfig(entry!.schema, { flags: section })).not.toThrow();
      }
      if (tactic) {
        // Tactic mode calls the verifier's REPL: the preset must say which one.
        expect(file.services.verifier?.repl, `${name}: services.verifier.repl`).toMatchObject({ command: expect.anything() });
      }
      const runId = `train-${name.replace(".yaml", "")}`;
      // Async needs a second step to overlap with the first; it samples one policy version behind.
      const steps = file.training.async ? 2 : 1;
      if (tactic) {
        const { run, lines, tactics } = await oneTacticStep(runId, file, dataset);
        expect(run.error).toBe("");
        expect(run.state).toBe(RunState.COMPLETED);
        // Every trajectory opened its theorem and applied tactics on the REPL.
        expect(lines).toHaveLength(1);
        expect(lines[0]!.metrics.proofs_not_started).toBe(0);
        expect(lines[0]!.metrics.proof_steps_mean).toBeGreaterThan(0);
        expect(tactics).toBeGreaterThan(0);
        return;
      }
      const run = await oneStep(runId, file, { steps, training: { async: file.training.async }, prompt: file.prompt });
      expect(run.error).toBe("");
      expect(run.state).toBe(RunState.COMPLETED);
      const lines = await readSteps(run);
      expect(lines.map((l) => l.step)).toEqual(steps === 2 ? [1, 2] : [1]);
      expect(lines[0]!.metrics.policy_lag).toBe(0);
      // Step 2 sampled before step 1's adapter existed. (Versions are the learner's, which the
      // presets' runs here share, so the lag counts their steps too: at least 1, not exactly 1.)
      if (file.training.async) expect(lines[1]!.metrics.policy_lag).toBeGreaterThanOrEqual(lines[0]!.metrics.trained!);
    }, 120_000);
  }

  it("a misspelt key in a preset is refused, naming it", () => {
    expect(() =>
      trainRunConfig(loadConfig(TrainFileSchema, { file: path.join(configs, "train", "smoke.yaml"), overrides: ["training.stepz=3"] })),
    ).toThrow(/training\.stepz: unknown key; accepted: steps, /);
  });
});
