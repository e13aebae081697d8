// Every preset in configs/algorithms/ and configs/train/ loads as a `lean-grpo train --config`
// file, and its algorithm knobs are accepted by the real learner: one step of each on the mesh.
import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OrchestratorService, RunState, type Run } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createServiceClient, loadConfig } from "@lean-grpo/kit";
import { TrainFileSchema } from "../src/cli/train-command.js";
import { ALGORITHM_NAMES } from "../src/run/run-config.js";
import type { RunningMesh } from "../src/cli/start-mesh.js";
import { SERVICE_CATALOG } from "../src/cli/service-catalog.js";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";

const configs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../configs");
const yamlIn = (dir: string) => readdirSync(path.join(configs, dir)).filter((f) => f.endsWith(".yaml")).sort();

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

/** One step with the preset's algorithm section and reward, on the tiny test model. */
async function oneStep(runId: string, file: ReturnType<typeof loadConfig<typeof TrainFileSchema>>): Promise<Run> {
  const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [mesh.urls.orchestrator!] });
  try {
    await client.startRun({
      datasetPath: fixture.dataset, runId,
      config: { algorithm: file.algorithm as never, reward: file.reward, training: tinyTraining(1, { dynamic_sampling: file.training.dynamic_sampling }) },
    });
    let final: Run | undefined;
    for await (const event of client.watchRun({ runId })) if (event.event.case === "stateChange") final = event.event.value;
    return final!;
  } finally {
    transport.close();
  }
}

describe("configs/algorithms", () => {
  it("has one preset per algorithm", () => {
    expect(yamlIn("algorithms")).toEqual([...ALGORITHM_NAMES].sort().map((name) => `${name}.yaml`));
  });

  for (const name of ALGORITHM_NAMES) {
    it(`${name}.yaml loads, names ${name}, and the learner accepts its knobs`, async () => {
      const file = loadConfig(TrainFileSchema, { file: path.join(configs, "algorithms", `${name}.yaml`) });
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
    it(`${name} loads and its algorithm runs a step`, async () => {
      const file = loadConfig(TrainFileSchema, { file: path.join(configs, "train", name) });
      expect(file.model.dir).toBe("models/arith-tiny");
      // Service sections are validated by each service's own schema when the mesh starts.
      for (const [service, section] of Object.entries(file.services)) {
        const entry = SERVICE_CATALOG.find((e) => e.name === service);
        expect(entry, `services.${service}`).toBeDefined();
        expect(() => loadConfig(entry!.schema, { flags: section })).not.toThrow();
      }
      const run = await oneStep(`train-${name.replace(".yaml", "")}`, file);
      expect(run.error).toBe("");
      expect(run.state).toBe(RunState.COMPLETED);
    }, 60_000);
  }

  it("a misspelt key in a preset is refused, naming it", () => {
    expect(() => loadConfig(TrainFileSchema, { file: path.join(configs, "train", "smoke.yaml"), overrides: ["training.stepz=3"] })).toThrow(/stepz/);
  });
});
