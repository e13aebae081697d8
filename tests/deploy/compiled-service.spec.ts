// What each image starts, without Docker: deploy/docker/bundle-service.mjs compiles the
// service and the kit's health probe to services/<service>/dist/*.mjs (the Dockerfiles'
// build stage runs the same script), node starts the compiled server with the image's
// config file, the compiled probe finds it SERVING, and SIGTERM drains it to exit 0; the
// learner's bundled gradient thread loads a model and reports ready.
// Here npm packages resolve from the repository's node_modules; an image has the
// service's production install instead.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/interop-verifier.js";
import { startServiceProcess } from "../support/service-process.js";

const run = promisify(execFile);
const SERVICES = ["inference", "verifier", "reward", "learner", "orchestrator"];

describe("each service compiled as its image runs it", () => {
  it.each(SERVICES)(
    "%s: the bundle starts with the image's config, answers the compiled health probe, drains on SIGTERM",
    async (service) => {
      await run(process.execPath, ["deploy/docker/bundle-service.mjs", service], { cwd: repoRoot });
      const server = path.join(repoRoot, "services", service, "dist/server.mjs");
      // The workspaces' TypeScript is compiled in: the bundle imports no workspace and no .ts file.
      const imports = [...readFileSync(server, "utf8").matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]!);
      expect(imports).toContain("@connectrpc/connect-node");
      expect(imports.filter((i) => i.startsWith("@lean-grpo/") || i.endsWith(".ts"))).toEqual([]);
      if (service === "learner") await expectGradientWorkerStarts();
      const started = await startServiceProcess(
        service,
        ["--config", `deploy/k8s/base/config/${service}.yaml`, "server.shutdown.drain_delay_ms=0"],
        // The image's config binds 0.0.0.0, which a service does without a token only by refusing to start.
        { LEANGRPO_AUTH_TOKEN: "compiled-service-token" },
        { entry: "compiled" },
      );
      try {
        const probe = await run(process.execPath, [`services/${service}/dist/health-probe.mjs`, new URL(started.url).host], {
          cwd: repoRoot,
        });
        expect(probe.stdout.trim()).toBe("SERVING");
      } finally {
        expect(await started.stop()).toBe(0);
      }
    },
    60_000,
  );
});

/** The learner's bundle carries its gradient thread (threads > 1): it loads the model and reports ready. */
async function expectGradientWorkerStarts(): Promise<void> {
  const entry = path.join(repoRoot, "services/learner/dist/gradient-worker.mjs");
  const imports = [...readFileSync(entry, "utf8").matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]!);
  expect(imports.filter((i) => i.startsWith("@lean-grpo/") || i.endsWith(".ts"))).toEqual([]);
  const worker = new Worker(entry, {
    workerData: {
      modelDir: path.join(repoRoot, "models/arith-tiny"),
      backend: "cpu",
      lora: { rank: 4, alpha: 8, targetModules: ["q_proj"], dropout: 0, useRslora: false },
    },
  });
  try {
    const first = await new Promise<{ kind: string; message?: string }>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    expect(first).toEqual({ kind: "ready" });
  } finally {
    await worker.terminate();
  }
}
