// One test per check of services/orchestrator/src/run/preflight/run-preflight.ts, through StartRun on a
// whole mesh: each refuses with its own status and a message naming the key and what is
// accepted, and a refused run leaves no directory behind (the checks run before any output).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";
import { withMesh, type OrchestratorClient } from "./support/orchestrator-client.js";
import { startMesh } from "../src/mesh/start-mesh.js";
import { repoRoot } from "../../../tests/support/interop-verifier.js";
import { startVllmStandIn, type VllmStandIn } from "../../../tests/fakes/vllm/vllm-stand-in.js";

let fixture: MeshFixture;
let vllm: VllmStandIn | undefined;

beforeAll(async () => {
  fixture = await meshFixture();
});
afterAll(async () => {
  await vllm?.close();
  await fixture?.cleanup();
});

/** StartRun's refusal (undefined when the run was accepted) and whether the run left a directory. */
async function refusal(client: OrchestratorClient, runId: string, request: Record<string, unknown>) {
  const error = await client.startRun({ runId, datasetPath: fixture.dataset, ...request }).then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  return { error, leftDirectory: existsSync(path.join(fixture.runsDir, runId)) };
}

describe("StartRun's pre-flight checks", () => {
  it("run shape: tactic mode refuses a math-answer dataset, naming the mode and the problem", async () => {
    await withMesh(await fixture.start(), async (client) => {
      const { error, leftDirectory } = await refusal(client, "preflight-mode", { config: { training: { mode: "tactic" } } });
      expect(error?.code).toBe(Code.InvalidArgument);
      expect(error?.rawMessage).toMatch(/training\.mode "tactic" needs Lean theorems.*problem 1 .*accepted: whole, tactic/);
      expect(leftDirectory).toBe(false);
    });
  }, 60_000);

  it("algorithm: a name the learner does not have is refused with the learner's list", async () => {
    await withMesh(await fixture.start(), async (client) => {
      const { error, leftDirectory } = await refusal(client, "preflight-algorithm", {
        config: { training: tinyTraining(1), algorithm: { name: "grpoo" } },
      });
      expect(error?.code).toBe(Code.InvalidArgument);
      expect(error?.rawMessage).toMatch(/algorithm\.name: the learner has no algorithm "grpoo"; it has: .*\bgrpo\b.*\bdapo\b/);
      expect(leftDirectory).toBe(false);
    });
  }, 60_000);

  it("sampling: a sampler that would report another distribution's logprobs is refused naming the sampling keys", async () => {
    // vLLM started without --logprobs-mode processed_logprobs cannot report logprobs of T = 0.7 sampling.
    vllm = await startVllmStandIn({ logprobsMode: "raw_logprobs" });
    const mesh = await startMesh({
      modelDir: fixture.modelDir,
      services: {
        inference: { vllm: { url: vllm.url, logprobs_mode: "raw_logprobs" } },
        learner: { backend: "cpu", "lora.rank": 2, "lora.alpha": 4 },
      },
      orchestrator: { runs_dir: fixture.runsDir, data_root: fixture.dir },
    });
    await withMesh(mesh, async (client) => {
      const { error, leftDirectory } = await refusal(client, "preflight-sampling", {
        config: { training: { ...tinyTraining(1), temperature: 0.7 } },
      });
      expect(error?.code).toBe(Code.FailedPrecondition);
      expect(error?.rawMessage).toMatch(
        /training\.temperature=0\.7.*the inference service cannot honour this sampling distribution:.*logprobs_mode/,
      );
      expect(leftDirectory).toBe(false);
    });
  }, 60_000);

  it("reward: an unknown preset is refused at the start with the reward service's list", async () => {
    await withMesh(await fixture.start(), async (client) => {
      const { error, leftDirectory } = await refusal(client, "preflight-reward", {
        config: { training: tinyTraining(1), reward: { preset: "shapd" } },
      });
      expect(error?.code).toBe(Code.InvalidArgument);
      expect(error?.rawMessage).toMatch(/unknown preset "shapd"; accepted: .*binary.*shaped/);
      expect(leftDirectory).toBe(false);
    });
  }, 60_000);

  it("prompts: a held-out problem the tokenizer cannot encode is refused before step 1, naming the set and the line", async () => {
    // ∀ is outside the shipped model's vocabulary (the fixture's random model maps it to its unk token).
    const heldout = path.join(fixture.dir, "heldout-unencodable.jsonl");
    await writeFile(
      heldout,
      [JSON.stringify({ problem: "1+2", answer: "3" }), JSON.stringify({ problem: "∀ n, n = n", answer: "1" })].join("\n"),
    );
    const mesh = await startMesh({
      modelDir: `${repoRoot}models/arith-tiny`,
      services: { inference: { embedded: { tensor_backend: "cpu" } }, learner: { backend: "cpu" } },
      orchestrator: { runs_dir: fixture.runsDir, data_root: fixture.dir },
    });
    await withMesh(mesh, async (client) => {
      const { error, leftDirectory } = await refusal(client, "preflight-prompts", {
        config: { training: tinyTraining(1), eval: { data: path.basename(heldout) } },
      });
      expect(error?.code).toBe(Code.InvalidArgument);
      expect(error?.rawMessage).toMatch(/cannot encode 1 of the 2 prompts of the held-out set .*heldout-unencodable\.jsonl \(.*2: /);
      expect(leftDirectory).toBe(false);
    });
  }, 60_000);
});
