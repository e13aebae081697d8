// The model library drops TensorFlow.js's "install our node backend" banner, and nothing else.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { withoutTfjsBanner } from "../src/backend/tfjs-banner-filter.js";

// The text tfjs-backend-cpu 4.x passes to console.warn on its first tensor in Node.
const BANNER =
  "\n============================\nHi, looks like you are running TensorFlow.js in Node.js. To speed things up dramatically, " +
  "install our node backend, visit https://github.com/tensorflow/tfjs-node for more details. \n============================";

describe("the tfjs banner filter", () => {
  it("drops the banner and forwards every other warning unchanged", () => {
    const warn = vi.fn();
    const filtered = withoutTfjsBanner(warn);
    filtered(BANNER);
    filtered("backend wasm: falling back", { detail: 1 });
    filtered("Hi, looks like you are running TensorFlow.js in Node.js (not the banner's shape)");
    expect(warn.mock.calls).toEqual([
      ["backend wasm: falling back", { detail: 1 }],
      ["Hi, looks like you are running TensorFlow.js in Node.js (not the banner's shape)"],
    ]);
  });

  it("is installed by the library: a process that makes a CPU tensor prints no banner but its own warning", () => {
    const root = fileURLToPath(new URL("..", import.meta.url));
    const script = [
      'const { useBackend } = await import("./src/index.ts");',
      'const tf = await import("@tensorflow/tfjs-core");',
      'await useBackend("cpu");',
      "tf.tensor1d([1, 2]).dataSync();",
      'console.warn("a real warning");',
    ].join("\n");
    const result = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, VITEST: "" },
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain("a real warning");
    expect(result.stderr).not.toContain("looks like you are running TensorFlow.js");
  });
});
