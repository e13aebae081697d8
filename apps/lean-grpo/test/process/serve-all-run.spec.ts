// `lean-grpo serve all` is one wired mesh: a gRPC client that knows only the orchestrator's
// address starts a run with a dataset path and a run config, watches it and reads it back,
// and the shipped model trains to COMPLETED. No wiring or model settings are given: only
// free ports and a temporary runs_dir. Two clients, as the README shows them: the Python
// grpcio example (messages from the descriptor set) and `buf curl` (schema by reflection).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { repoRoot } from "../../../../tests/support/interop-verifier.js";

const SERVICES = ["inference", "verifier", "reward", "learner", "orchestrator"];
/** 2 tiny steps: a run config, as any client would send it (not a mesh setting). */
const TINY_RUN = { training: { steps: 2, batch_size: 2, num_generations: 2, max_tokens: 8 } };
const python = spawnSync("/usr/bin/python3", ["-c", "import grpc, google.protobuf"], { stdio: "ignore" }).status === 0;
const buf = path.join(repoRoot, "node_modules/.bin/buf");

let dir: string;
let mesh: ChildProcess;
let orchestrator: string;
let modelLine = "";

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "serve-all-run-"));
  const overrides = [
    ...SERVICES.flatMap((name) => [`${name}.server.port=0`, `${name}.server.shutdown.drain_delay_ms=0`]),
    `orchestrator.runs_dir=${path.join(dir, "runs")}`,
    // Clients name datasets relative to the orchestrator's data_root: here a directory of the test's own.
    `orchestrator.data_root=${dir}`,
  ];
  mkdirSync(path.join(dir, "examples"));
  copyFileSync(path.join(repoRoot, "examples/arith.jsonl"), path.join(dir, "examples/arith.jsonl"));
  mesh = spawn(process.execPath, [`${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`, "serve", "all", ...overrides], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  for await (const line of createInterface({ input: mesh.stdout! })) {
    const [name, url] = line.split(/\s+/);
    if (name === "orchestrator") orchestrator = url!;
    if (name === "model") {
      modelLine = line;
      break;
    }
  }
}, 60_000);

afterAll(async () => {
  if (mesh && mesh.exitCode === null) {
    mesh.kill("SIGTERM");
    await once(mesh, "exit");
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("lean-grpo serve all, driven over gRPC", () => {
  it("says which model the sampler and the learner share", () => {
    expect(modelLine).toBe("model models/arith-tiny (inference, learner)");
  });

  it.skipIf(!python)(
    "a Python grpcio client with no generated code trains 2 steps to COMPLETED",
    async () => {
      const descriptorSet = path.join(dir, "leangrpo.binpb");
      execFileSync(buf, ["build", "--as-file-descriptor-set", "-o", descriptorSet], { cwd: repoRoot });
      const { stdout } = await promisify(execFile)(
        "/usr/bin/python3",
        [
          path.join(repoRoot, "examples/clients/train_run.py"),
          orchestrator.replace("http://", ""),
          descriptorSet,
          "examples/arith.jsonl",
          JSON.stringify(TINY_RUN),
        ],
        { cwd: repoRoot, timeout: 90_000 },
      );
      const lines = stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines[0].state).toBe("RUN_STATE_PENDING");
      expect(lines.filter((l) => "step" in l).map((l) => l.step)).toEqual([1, 2]);
      const final = lines.at(-1).run;
      expect(final.state).toBe("RUN_STATE_COMPLETED");
      expect(final.step).toBe("2");
      expect(final.error ?? "").toBe("");
    },
    120_000,
  );

  it("buf curl alone starts, watches and reads a run to COMPLETED (schema by reflection)", async () => {
    const curl = async (method: string, body: unknown) =>
      (
        await promisify(execFile)(
          buf,
          [
            "curl",
            "--protocol",
            "grpc",
            "--http2-prior-knowledge",
            "-d",
            JSON.stringify(body),
            `${orchestrator}/leangrpo.v1.OrchestratorService/${method}`,
          ],
          { cwd: repoRoot, timeout: 90_000 },
        )
      ).stdout;
    const started = JSON.parse(await curl("StartRun", { datasetPath: "examples/arith.jsonl", runId: "buf-curl-run", runConfig: TINY_RUN }));
    expect(started.run.id).toBe("buf-curl-run");
    // The typed run config, as the orchestrator resolved it (defaults filled in).
    expect(started.config.training).toMatchObject({ steps: 2, topP: 1, mode: "whole" });
    // WatchRun streams one JSON object per event until the run ends.
    const watched = await curl("WatchRun", { runId: "buf-curl-run", fromStart: true });
    expect(watched).toMatch(/"stateChange"[\s\S]*"state": "RUN_STATE_COMPLETED"/);
    const { run } = JSON.parse(await curl("GetRun", { runId: "buf-curl-run" }));
    expect(run.state).toBe("RUN_STATE_COMPLETED");
    expect(run.step).toBe("2");
  }, 120_000);

  it("lean-grpo eval --url evaluates that run's adapter through the running orchestrator's Evaluate", async () => {
    // The first 16 held-out problems: a few seconds on the shipped model.
    const heldout = path.join(dir, "heldout.jsonl");
    writeFileSync(heldout, readFileSync(path.join(repoRoot, "examples/arith-heldout.jsonl"), "utf8").split("\n").slice(0, 16).join("\n"));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        `${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`,
        "eval",
        // As the running orchestrator names it: relative to its data_root.
        path.basename(heldout),
        "--url",
        orchestrator,
        "--run",
        "buf-curl-run",
        "--max-tokens",
        "8",
        "--json",
      ],
      { cwd: repoRoot, timeout: 90_000, env: { ...process.env, LOG_LEVEL: "warn" } },
    );
    const report = JSON.parse(stdout);
    // The learner is shared by the runs of this mesh: versions go on from the previous run.
    expect(report.evaluated).toMatch(new RegExp(`^${path.join(dir, "runs", "buf-curl-run", "adapters")}/policy-v[0-9]+$`));
    expect(report.greedy).toBe(true);
    expect(report.problems).toBe(16);
    expect(report.results.length).toBe(16);
    expect(report.results.every((r: { samples: number }) => r.samples === 1)).toBe(true);
  }, 120_000);

  it("refuses a mesh model directory that is not there, naming model.dir, before serving", async () => {
    const child = spawn(process.execPath, [`${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`, "serve", "all", "model.dir=models/nope"], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const [code] = await once(child, "exit");
    expect(code).toBe(2);
    expect(stderr).toContain('model.dir "models/nope" does not exist');
  });
});
