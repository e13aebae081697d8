// Every path and run id a client sends the orchestrator stays inside its roots: datasets,
// eval data, adapters and checkpoints under data_root, runs under runs_dir. Each attack is
// sent over gRPC to a served orchestrator; all are refused before any other service is
// called (the services' URLs here lead nowhere), and no error carries a file's text.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { OrchestratorService } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createServiceClient, loadConfig, serve, type RunningServer, type ServiceClient } from "@lean-grpo/kit";
import { OrchestratorConfigSchema } from "../src/config.js";
import { createOrchestratorService } from "../src/service.js";

const SECRET = "root:x:0:0:SECRET-7f3a:/root:/bin/bash\nTOKEN=SECRET-9b2c\n";
const NOWHERE = "http://127.0.0.1:9";

let base: string;
let server: RunningServer;
let orchestrator: ServiceClient<typeof OrchestratorService>;

beforeAll(async () => {
  base = mkdtempSync(path.join(tmpdir(), "orchestrator-paths-"));
  const data = path.join(base, "data");
  mkdirSync(path.join(data, "sub"), { recursive: true });
  writeFileSync(path.join(base, "secret.txt"), SECRET);
  // Inside the root, but not JSON: its lines must not come back in the error.
  writeFileSync(path.join(data, "not-json.jsonl"), SECRET);
  writeFileSync(path.join(data, "big.jsonl"), `${JSON.stringify({ problem: "1+1", answer: "2" })}\n`.repeat(200));
  symlinkSync(path.join(base, "secret.txt"), path.join(data, "escape.jsonl"));
  symlinkSync(base, path.join(data, "sub", "up"));
  symlinkSync("/dev/zero", path.join(data, "zero.jsonl"));
  execFileSync("mkfifo", [path.join(data, "fifo.jsonl")]);
  const config = loadConfig(OrchestratorConfigSchema, {
    flags: {
      runs_dir: path.join(base, "runs"),
      data_root: data,
      max_dataset_bytes: 4096,
      services: { inference: NOWHERE, reward: NOWHERE, learner: NOWHERE },
      service_retries: 0,
    },
  });
  server = await serve({ name: "orchestrator", services: [createOrchestratorService(config)], config: { port: 0 } });
  orchestrator = createServiceClient(OrchestratorService, { endpoints: [server.url], retry: { maxAttempts: 1 } });
});

afterAll(async () => {
  orchestrator?.transport.close();
  await server?.shutdown();
  rmSync(base, { recursive: true, force: true });
});

async function refused(call: Promise<unknown>): Promise<ConnectError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  expect(error, "the call is refused").toBeDefined();
  expect(error!.rawMessage).not.toMatch(/SECRET|root:x/);
  return error!;
}

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream);
}

describe("StartRun's dataset_path and eval.data", () => {
  const start = (datasetPath: string, extra: Record<string, unknown> = {}) =>
    refused(orchestrator.client.startRun({ datasetPath, runId: `r-${Math.random().toString(16).slice(2, 8)}`, ...extra }));

  it("refuses absolute paths (/etc/passwd, /proc/self/environ) without reading them", async () => {
    for (const file of ["/etc/passwd", "/proc/self/environ"]) {
      const error = await start(file);
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toBe(`dataset_path "${file}" is absolute; give a path relative to data_root`);
    }
  });

  it("refuses .. and every symlink inside data_root", async () => {
    expect((await start("../secret.txt")).rawMessage).toContain('contains ".."');
    const outOfRoot = await start("escape.jsonl");
    expect(outOfRoot.code).toBe(Code.InvalidArgument);
    expect(outOfRoot.rawMessage).toBe('dataset_path "escape.jsonl" is a symlink; symlinks inside data_root are refused');
    expect((await start("sub/up/secret.txt")).rawMessage).toBe('dataset_path "sub/up" is a symlink; symlinks inside data_root are refused');
  });

  it("refuses /dev/zero and a FIFO at once instead of reading forever or hanging", async () => {
    const t0 = performance.now();
    expect((await start("zero.jsonl")).code).toBe(Code.InvalidArgument);
    const fifo = await start("fifo.jsonl");
    expect(fifo.rawMessage).toBe('dataset_path "fifo.jsonl" is not a regular file (a directory, FIFO or device is refused)');
    // A directory is read as a `datasets` save_to_disk folder: one that is not is refused saying what is accepted.
    expect((await start("sub")).rawMessage).toContain("is a directory but not a datasets folder");
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  it("refuses a held-out file over max_dataset_bytes before reading it (a training set that size is streamed)", async () => {
    writeFileSync(path.join(base, "data", "small-train.jsonl"), `${JSON.stringify({ problem: "1+1", answer: "2" })}\n`);
    const error = await start("small-train.jsonl", { config: { eval: { data: "big.jsonl" } } });
    expect(error.code).toBe(Code.ResourceExhausted);
    expect(error.rawMessage).toBe('eval.data "big.jsonl" is larger than 4096 bytes, the most this server reads');
  });

  it("names the bad lines of a file that is not JSON without quoting them", async () => {
    const error = await start("not-json.jsonl");
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(/line 1: not valid JSON/);
  });

  it("checks eval.data the same way, naming the key", async () => {
    writeFileSync(path.join(base, "data", "train.jsonl"), `${JSON.stringify({ problem: "1+1", answer: "2" })}\n`);
    const error = await start("train.jsonl", { config: { eval: { data: "/etc/passwd" } } });
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toBe('eval.data "/etc/passwd" is absolute; give a path relative to data_root');
  });
});

describe("run ids", () => {
  it("StartRun refuses a run id or resume id that is not one safe name, and writes nothing", async () => {
    for (const runId of ["..", ".", "../escaped", "/tmp/x", "a/b"]) {
      const error = await refused(orchestrator.client.startRun({ runId, datasetPath: "train.jsonl" }));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(/^run_id ".*" is not accepted/);
    }
    const resume = await refused(orchestrator.client.startRun({ resumeRunId: "..", datasetPath: "train.jsonl" }));
    expect(resume.rawMessage).toMatch(/^resume_run_id "\.\." is not accepted/);
    // Nothing landed beside runs_dir (the old `..` wrote config.json, run.json, checkpoints/ there).
    expect(readdirSync(base).sort()).toEqual(["data", "secret.txt"]);
    expect(existsSync(path.join(base, "runs"))).toBe(false);
  });

  it("GetRun, WatchRun, StopRun and Evaluate refuse absolute and ../ ids", async () => {
    for (const runId of ["..", "/etc", "../data"]) {
      expect((await refused(orchestrator.client.getRun({ runId }))).code).toBe(Code.InvalidArgument);
      expect((await refused(drain(orchestrator.client.watchRun({ runId })))).code).toBe(Code.InvalidArgument);
      expect((await refused(orchestrator.client.stopRun({ runId }))).code).toBe(Code.InvalidArgument);
      expect((await refused(drain(orchestrator.client.evaluate({ runId, datasetPath: "train.jsonl" })))).code).toBe(Code.InvalidArgument);
    }
  });
});

describe("Evaluate's paths", () => {
  const evaluate = (request: Parameters<typeof orchestrator.client.evaluate>[0]) => refused(drain(orchestrator.client.evaluate(request)));

  it("reads dataset_path under data_root only", async () => {
    expect((await evaluate({ datasetPath: "/proc/self/environ" })).rawMessage).toContain("is absolute");
    expect((await evaluate({ datasetPath: "escape.jsonl" })).rawMessage).toContain("is a symlink; symlinks inside data_root are refused");
    expect((await evaluate({ datasetPath: "fifo.jsonl" })).rawMessage).toContain("not a regular file");
  });

  it("resolves adapter_path and checkpoint_path under data_root", async () => {
    for (const field of ["adapterPath", "checkpointPath"] as const) {
      expect((await evaluate({ datasetPath: "train.jsonl", [field]: "/tmp" })).code).toBe(Code.InvalidArgument);
      expect((await evaluate({ datasetPath: "train.jsonl", [field]: "../data" })).code).toBe(Code.InvalidArgument);
      expect((await evaluate({ datasetPath: "train.jsonl", [field]: "sub/up" })).rawMessage).toContain(
        "is a symlink; symlinks inside data_root are refused",
      );
    }
  });
});

describe("symlinks planted inside runs_dir", () => {
  const RUN = (id: string, state = "FAILED") => ({
    id,
    state,
    algorithm: "grpo",
    step: 1,
    total_steps: 2,
    dataset: "train.jsonl",
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z",
    error: "",
    last_checkpoint_step: 1,
    checkpointed: true,
    last_metrics: {},
  });
  let runs: string;
  let outside: string;

  beforeAll(() => {
    runs = path.join(base, "runs");
    outside = path.join(base, "outside-run");
    mkdirSync(path.join(runs, "honest"), { recursive: true });
    writeFileSync(path.join(runs, "honest", "run.json"), JSON.stringify(RUN("honest")));
    writeFileSync(path.join(runs, "honest", "config.json"), JSON.stringify({ run: {}, dataset: "train.jsonl" }));
    // A run folder that is a link to a run-shaped folder elsewhere.
    mkdirSync(outside);
    writeFileSync(path.join(outside, "run.json"), JSON.stringify(RUN("linked")));
    writeFileSync(path.join(outside, "config.json"), JSON.stringify({ run: {}, dataset: "train.jsonl" }));
    symlinkSync(outside, path.join(runs, "linked"));
    // run.json itself a link to a secret, and a run.json that is a secret's text.
    mkdirSync(path.join(runs, "secret-link"));
    symlinkSync(path.join(base, "secret.txt"), path.join(runs, "secret-link", "run.json"));
    mkdirSync(path.join(runs, "not-json"));
    writeFileSync(path.join(runs, "not-json", "run.json"), SECRET);
    mkdirSync(path.join(runs, "bad-step"));
    writeFileSync(path.join(runs, "bad-step", "run.json"), JSON.stringify({ ...RUN("bad-step"), step: "SECRET-7f3a" }));
  });
  afterAll(() => rmSync(runs, { recursive: true, force: true }));

  it("ListRuns lists real run folders only", async () => {
    const { runs: listed } = await orchestrator.client.listRuns({});
    expect(listed.map((r) => r.id)).toEqual(["honest"]);
  });

  it("GetRun and WatchRun refuse a run folder that is a symlink, naming it, and read nothing through it", async () => {
    const get = await refused(orchestrator.client.getRun({ runId: "linked" }));
    expect(get.code).toBe(Code.InvalidArgument);
    expect(get.rawMessage).toBe('run_id "linked" is a symlink; symlinks inside runs_dir are refused');
    expect((await refused(drain(orchestrator.client.watchRun({ runId: "linked", fromStart: true })))).rawMessage).toContain("is a symlink");
    expect((await refused(drain(orchestrator.client.evaluate({ runId: "linked", datasetPath: "train.jsonl" })))).rawMessage).toContain(
      "is a symlink",
    );
    expect((await orchestrator.client.getRun({ runId: "honest" })).run?.id).toBe("honest");
  });

  it("StartRun neither resumes nor starts over a run folder that is a symlink, and leaves what it points to alone", async () => {
    const resume = await refused(orchestrator.client.startRun({ resumeRunId: "linked" }));
    expect(resume.rawMessage).toBe('resume_run_id "linked" is a symlink; symlinks inside runs_dir are refused');
    const fresh = await refused(orchestrator.client.startRun({ runId: "linked", datasetPath: "train.jsonl" }));
    expect(fresh.rawMessage).toBe('run_id "linked" is a symlink; symlinks inside runs_dir are refused');
    expect(readdirSync(outside).sort()).toEqual(["config.json", "run.json"]);
  });

  it("never quotes a run file: run.json as a link to a secret, as a secret's text, or with a field that is one", async () => {
    const link = await refused(orchestrator.client.getRun({ runId: "secret-link" }));
    expect(link.rawMessage).toBe('run_id "secret-link/run.json" is a symlink; symlinks inside runs_dir are refused');
    const text = await refused(orchestrator.client.getRun({ runId: "not-json" }));
    expect(text.rawMessage).toBe("not-json/run.json is not valid JSON");
    const field = await refused(orchestrator.client.getRun({ runId: "bad-step" }));
    expect(field.rawMessage).toBe('bad-step/run.json: "step" is not a non-negative integer; is it a run.json this orchestrator wrote?');
  });
});
