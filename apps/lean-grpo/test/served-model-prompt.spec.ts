// A client of a running mesh (`serve all`, any language) that names no prompt samples the served
// model with the prompt it was made for: the inference service lists models/arith-tiny's
// prompt_format.json (ListModels), and StartRun fills the prompt keys the request leaves unset
// from it, keeping every key the request or its overrides set.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { createServiceClient } from "@lean-grpo/kit";
import { startMesh } from "../src/mesh/start-mesh.js";
import { withMesh, watchToEnd } from "./support/orchestrator-client.js";
import { repoRoot } from "../../../tests/support/interop-verifier.js";

let cwd: string;
let runsDir: string;
beforeAll(() => {
  cwd = process.cwd();
  process.chdir(repoRoot);
  runsDir = mkdtempSync(path.join(tmpdir(), "served-prompt-"));
});
afterAll(() => {
  process.chdir(cwd);
  rmSync(runsDir, { recursive: true, force: true });
});

describe("StartRun on a running mesh", () => {
  it("takes the served model's prompt for the keys a request leaves unset, and keeps those it sets", async () => {
    const mesh = await startMesh({
      modelDir: "models/arith-tiny",
      services: { learner: { checkpoint_dir: runsDir } },
      orchestrator: { runs_dir: runsDir },
    });
    const inference = createServiceClient(InferenceService, { endpoints: [mesh.urls.inference!] });
    try {
      const { baseModel } = await inference.client.listModels({});
      expect(baseModel?.promptFormat).toMatchObject({ system: "", mathTemplate: "{problem}", feedbackTemplate: "{feedback} {problem}" });
      expect(baseModel?.promptFormat?.leanTemplate).toBeUndefined();
    } finally {
      inference.transport.close();
    }
    await withMesh(mesh, async (client) => {
      const oneStep = { training: { steps: 1, batchSize: 1, numGenerations: 2, maxTokens: 4 } };
      const plain = await client.startRun({ runId: "plain", datasetPath: "examples/arith.jsonl", runConfig: oneStep });
      expect(plain.config?.prompt).toMatchObject({ system: "", mathTemplate: "{problem}", feedbackTemplate: "{feedback} {problem}" });
      // The run config's own default where the model says nothing.
      expect(plain.config?.prompt?.leanTemplate).toMatch(/^Complete the following Lean 4 proof\./u);
      await watchToEnd(client, "plain");

      const chosen = await client.startRun({
        runId: "chosen",
        datasetPath: "examples/arith.jsonl",
        runConfig: { ...oneStep, prompt: { system: "Be brief." } },
        overrides: ["prompt.math_template={problem} ="],
      });
      expect(chosen.config?.prompt).toMatchObject({
        system: "Be brief.",
        mathTemplate: "{problem} =",
        feedbackTemplate: "{feedback} {problem}",
      });
      await watchToEnd(client, "chosen");
    });
  }, 300_000);
});
