// startMesh with services.learner.impl: torch: the embedded mesh runs the PyTorch learner as
// a child process on its learner URL (everything else unchanged), and stops it with the mesh.
import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { startMesh } from "../../src/mesh/start-mesh.js";
import type { TorchLearnerProcess } from "../../src/mesh/torch-learner-process.js";
import { writeTinyModel } from "../../../../tests/support/tiny-model.js";

const hasTorch = spawnSync("/usr/bin/python3", ["-c", "import torch, grpc, google.protobuf"]).status === 0;
if (!hasTorch) console.warn("skipping the mesh with the PyTorch learner: /usr/bin/python3 lacks torch, grpcio or protobuf");

describe("startMesh with services.learner.impl", () => {
  it("refuses an unknown impl before starting anything", async () => {
    await expect(startMesh({ modelDir: "/nonexistent", services: { learner: { impl: "jax" } } })).rejects.toThrow(
      'config key "services.learner.impl": expected one of "ts" | "torch", received string "jax"',
    );
  });

  it.skipIf(!hasTorch)(
    "torch: serves the PyTorch learner with the section's settings and stops it with the mesh",
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), "torch-mesh-"));
      try {
        const modelDir = await writeTinyModel(path.join(dir, "model"));
        const mesh = await startMesh({
          modelDir,
          services: { learner: { impl: "torch", python: "/usr/bin/python3", lora: { rank: 2, alpha: 4 }, torch: { device: "cpu" } } },
        });
        const learner = mesh.servers.learner as unknown as TorchLearnerProcess;
        try {
          const client = createClient(LearnerService, createGrpcTransport({ baseUrl: mesh.urls.learner! }));
          // The model loads on the first RPC that needs it, as the TS learner's does.
          const scored = await client.computeLogprobs({ sequences: [{ promptTokenIds: [3, 4, 5], completionTokenIds: [6, 7] }] });
          expect(scored.sequences[0]!.logprobs).toHaveLength(2);
          const status = await client.getStatus({});
          expect(status.backend).toBe("torch-cpu");
          expect(status.lora).toMatchObject({ rank: 2, alpha: 4 });
          expect(status.model).toBe(modelDir);
        } finally {
          await mesh.shutdown();
        }
        expect(() => process.kill(learner.pid, 0), "the learner process is gone").toThrow();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
