// Symlinks planted inside runs_dir (a shared volume another tenant can write to), attacked
// through `lean-grpo serve all`, where runs_dir is also the learner's checkpoint_dir: a
// checkpoint's optimizer file or adapter folder linked elsewhere, a run folder linked to a
// run-shaped folder elsewhere, a run.json linked to a secret. Each is refused by name,
// nothing outside runs_dir is read or written, and no answer quotes a file.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { OrchestratorService } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { startServeAll, type ServeAllProcess } from "../support/serve-all-process.js";

const SECRET = "root:x:0:0:SECRET-41c7:/root:/bin/sh\n";
const VICTIM = "VICTIM-7a21 untouched\n";

let dir: string;
let runs: string;
let outside: string;
let mesh: ServeAllProcess | undefined;
let learner: Client<typeof LearnerService>;
let orchestrator: Client<typeof OrchestratorService>;

/** A run.json as the orchestrator writes one. */
const runFile = (id: string) => ({
  id,
  state: "FAILED",
  algorithm: "grpo",
  step: 1,
  total_steps: 2,
  dataset: "examples/arith.jsonl",
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
  error: "stopped",
  last_checkpoint_step: 1,
  checkpointed: true,
  last_metrics: {},
});

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "planted-symlinks-"));
  runs = path.join(dir, "runs");
  outside = path.join(dir, "outside");
  mkdirSync(runs);
  mkdirSync(path.join(outside, "adapter-here"), { recursive: true });
  writeFileSync(path.join(outside, "victim.bin"), VICTIM);
  writeFileSync(path.join(dir, "secret.txt"), SECRET);
  // A run-shaped folder outside runs_dir, and a run folder inside that links to it.
  mkdirSync(path.join(outside, "run"));
  writeFileSync(path.join(outside, "run", "run.json"), JSON.stringify(runFile("linked")));
  writeFileSync(path.join(outside, "run", "config.json"), JSON.stringify({ run: {}, dataset: "examples/arith.jsonl" }));
  symlinkSync(path.join(outside, "run"), path.join(runs, "linked"));
  // A run whose run.json links to a secret.
  mkdirSync(path.join(runs, "secret-run"));
  symlinkSync(path.join(dir, "secret.txt"), path.join(runs, "secret-run", "run.json"));
  // A checkpoint whose optimizer state links to a file elsewhere, one whose adapter folder links to a folder elsewhere.
  mkdirSync(path.join(runs, "ck"));
  symlinkSync("../../outside/victim.bin", path.join(runs, "ck", "optimizer.safetensors"));
  mkdirSync(path.join(runs, "ck2"));
  symlinkSync(path.join(outside, "adapter-here"), path.join(runs, "ck2", "adapter"));

  // On loopback, without auth: what is attacked here is the disk, not the transport.
  const { LEANGRPO_AUTH_TOKEN: _token, ...env } = process.env;
  mesh = await startServeAll([`orchestrator.runs_dir=${runs}`, `orchestrator.data_root=${dir}`], { ...env, LOG_LEVEL: "warn" });
  learner = createClient(LearnerService, createGrpcTransport({ baseUrl: mesh.urls.get("learner")! }));
  orchestrator = createClient(OrchestratorService, createGrpcTransport({ baseUrl: mesh.urls.get("orchestrator")! }));
}, 120_000);

afterAll(async () => {
  await mesh?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The call's refusal; it must quote no file. */
async function refusal(call: Promise<unknown>): Promise<ConnectError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  expect(error, "the call is refused").toBeInstanceOf(ConnectError);
  expect(error!.rawMessage).not.toMatch(/SECRET|VICTIM|root:x/);
  return error!;
}

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream);
}

const outsideUntouched = () => {
  expect(readFileSync(path.join(outside, "victim.bin"), "utf8")).toBe(VICTIM);
  expect(readdirSync(path.join(outside, "adapter-here"))).toEqual([]);
  expect(readdirSync(path.join(outside, "run")).sort()).toEqual(["config.json", "run.json"]);
  expect(JSON.parse(readFileSync(path.join(outside, "run", "run.json"), "utf8"))).toEqual(runFile("linked"));
};

describe("serve all with symlinks planted inside runs_dir", () => {
  it("SaveCheckpoint writes through neither a checkpoint file nor a checkpoint folder that is a symlink", async () => {
    const file = await refusal(learner.saveCheckpoint({ path: "ck" }));
    expect(file.code).toBe(Code.InvalidArgument);
    expect(file.rawMessage).toBe('path "ck/optimizer.safetensors" is a symlink; symlinks inside checkpoint_dir are refused');
    const folder = await refusal(learner.saveCheckpoint({ path: "ck2" }));
    expect(folder.rawMessage).toBe('path "ck2/adapter" is a symlink; symlinks inside checkpoint_dir are refused');
    expect(readdirSync(path.join(runs, "ck"))).toEqual(["optimizer.safetensors"]);
    outsideUntouched();
    // An honest checkpoint beside them is written and read back.
    const saved = await learner.saveCheckpoint({ path: "honest-ck" });
    expect(statSync(path.join(runs, "honest-ck", "optimizer.safetensors")).isFile()).toBe(true);
    expect((await learner.loadCheckpoint({ path: saved.path })).step).toBe(saved.step);
  });

  it("a run folder that is a symlink is not listed, read, resumed or started over", async () => {
    expect((await orchestrator.listRuns({})).runs.map((r) => r.id)).not.toContain("linked");
    const get = await refusal(orchestrator.getRun({ runId: "linked" }));
    expect(get.code).toBe(Code.InvalidArgument);
    expect(get.rawMessage).toBe('run_id "linked" is a symlink; symlinks inside runs_dir are refused');
    expect((await refusal(drain(orchestrator.watchRun({ runId: "linked", fromStart: true })))).rawMessage).toContain("is a symlink");
    const resume = await refusal(orchestrator.startRun({ resumeRunId: "linked" }));
    expect(resume.rawMessage).toBe('resume_run_id "linked" is a symlink; symlinks inside runs_dir are refused');
    const fresh = await refusal(orchestrator.startRun({ runId: "linked", datasetPath: "examples/arith.jsonl" }));
    expect(fresh.rawMessage).toBe('run_id "linked" is a symlink; symlinks inside runs_dir are refused');
    outsideUntouched();
  });

  it("a run.json that links to a secret is refused by name, and its text never comes back", async () => {
    const get = await refusal(orchestrator.getRun({ runId: "secret-run" }));
    expect(get.rawMessage).toBe('run_id "secret-run/run.json" is a symlink; symlinks inside runs_dir are refused');
    await refusal(orchestrator.startRun({ resumeRunId: "secret-run" }));
    expect((await orchestrator.listRuns({})).runs.map((r) => r.id)).not.toContain("secret-run");
    expect(readFileSync(path.join(dir, "secret.txt"), "utf8")).toBe(SECRET);
  });
});
