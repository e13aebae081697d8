// `lean-grpo train --url` against a running `serve all`: the README's run, shortened, to the
// summary the local command prints; a dataset the orchestrator does not have refused with exit 2,
// naming it; and Ctrl-C stopping the run through StopRun.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { OrchestratorService, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { repoRoot } from "../../../../tests/support/interop-verifier.js";

const SERVICES = ["inference", "verifier", "reward", "learner", "orchestrator"];
const BIN = `${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`;

let dir: string;
let mesh: ChildProcess;
let orchestrator: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "train-url-"));
  mkdirSync(path.join(dir, "examples"));
  for (const file of ["arith.jsonl", "arith-heldout.jsonl"])
    copyFileSync(path.join(repoRoot, "examples", file), path.join(dir, "examples", file));
  const overrides = [
    ...SERVICES.flatMap((name) => [`${name}.server.port=0`, `${name}.server.shutdown.drain_delay_ms=0`]),
    `orchestrator.runs_dir=${path.join(dir, "runs")}`,
    `orchestrator.data_root=${dir}`,
  ];
  mesh = spawn(process.execPath, [BIN, "serve", "all", ...overrides], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  for await (const line of createInterface({ input: mesh.stdout! })) {
    const [name, url] = line.split(/\s+/);
    if (name === "orchestrator") {
      orchestrator = url!;
      break;
    }
  }
  mesh.stdout!.resume();
}, 300_000);

afterAll(async () => {
  if (mesh && mesh.exitCode === null) {
    mesh.kill("SIGTERM");
    await once(mesh, "exit");
  }
  rmSync(dir, { recursive: true, force: true });
});

const SHORT = ["training.steps=2", "training.batch_size=2", "training.num_generations=2", "eval.max_problems=4", "eval.every=1"];

function train(args: string[]): ChildProcess {
  return spawn(process.execPath, [BIN, "train", ...args, "--url", orchestrator], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

async function finished(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

describe("lean-grpo train --url, against serve all", () => {
  it("runs the README's run, shortened, to the local command's summary", async () => {
    const { code, stdout, stderr } = await finished(train(["examples/arith.jsonl", "--config", "configs/train/arith.yaml", ...SHORT]));
    expect(stderr).not.toMatch(/lean-grpo: (?!note)/);
    expect(code).toBe(0);
    // The config's services.learner section is the mesh's business: said, not silently dropped.
    expect(stderr).toMatch(
      /note: services\.learner configures the services `lean-grpo train` starts here; with --url the running mesh's own config decides/,
    );
    const lines = stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { step: number; metrics: Record<string, number> });
    expect(lines.map((l) => l.step)).toEqual([1, 2]);
    for (const line of lines) expect(Number.isFinite(line.metrics.reward_mean)).toBe(true);
    expect(stderr).toMatch(/held-out greedy accuracy after step 0: \d+\.\d% \(\d\/4/);
    expect(stdout).toMatch(/state\s*│\s*COMPLETED/);
    expect(stdout).toMatch(/held-out\s*│\s*\d+\.\d% after step 0 -> \d+\.\d% after step 2 \(greedy, 4 problems, 3 evaluations/);
    expect(stdout).toMatch(/step time\s*│\s*\d+\.\d s over 2 steps/);
    const runId = /run\s*│\s*(\S+)/.exec(stdout)![1]!;
    // The run lives with the orchestrator: in its runs_dir, not this command's.
    expect(stdout).toContain(path.join(dir, "runs", runId));
  }, 180_000);

  it("exits 2 naming the dataset when the orchestrator has no such file, starting nothing", async () => {
    const runs = createClient(OrchestratorService, createGrpcTransport({ baseUrl: orchestrator }));
    const before = (await runs.listRuns({})).runs.length;
    const { code, stderr } = await finished(train(["examples/nope.jsonl", "--config", "configs/train/arith.yaml", ...SHORT]));
    expect(code).toBe(2);
    expect(stderr).toMatch(/dataset_path.*examples\/nope\.jsonl/);
    expect((await runs.listRuns({})).runs).toHaveLength(before);
  }, 60_000);

  it("stops the run through StopRun on Ctrl-C and exits 130", async () => {
    const child = train([
      "examples/arith.jsonl",
      "--config",
      "configs/train/arith.yaml",
      "training.steps=50",
      "training.batch_size=2",
      "training.num_generations=2",
      "eval.max_problems=4",
    ]);
    let stdout = "";
    child.stderr!.resume();
    // Once the first step is reported, the run is running on the orchestrator.
    await new Promise<void>((resolve) => {
      child.stdout!.on("data", (chunk) => {
        stdout += chunk;
        if (stdout.includes('"step":1')) resolve();
      });
    });
    const runId = (JSON.parse(stdout.split("\n").find((l) => l.startsWith("{"))!) as { run: string }).run;
    child.kill("SIGINT");
    const [code] = (await once(child, "exit")) as [number | null];
    expect(code).toBe(130);
    const runs = createClient(OrchestratorService, createGrpcTransport({ baseUrl: orchestrator }));
    const run = (await runs.getRun({ runId })).run!;
    expect(run.state).toBe(RunState.STOPPED);
    expect(Number(run.step)).toBeLessThan(50);
  }, 180_000);
});
