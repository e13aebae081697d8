// `lean-grpo runs`: list, show and watch over OrchestratorService, against the runs on disk
// (an orchestrator started in-process) and against a live remote orchestrator (--url).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { OrchestratorService, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createServiceClient } from "@lean-grpo/kit";
import { runsCommand, type RunsCommandOptions } from "../src/commands/runs-command.js";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";

let fixture: MeshFixture;

async function capture(action: string, id: string | undefined, options: Partial<RunsCommandOptions>): Promise<string> {
  let out = "";
  await runsCommand(action, id, { runsDir: fixture.runsDir, ...options }, (text) => (out += text));
  return out;
}

beforeAll(async () => {
  fixture = await meshFixture();
  const mesh = await fixture.start();
  const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [mesh.urls.orchestrator!] });
  try {
    for (const [runId, algorithm] of [
      ["first", "grpo"],
      ["second", "drgrpo"],
    ] as const) {
      await client.startRun({ datasetPath: fixture.dataset, runId, config: { algorithm: { name: algorithm }, training: tinyTraining(2) } });
      for await (const _ of client.watchRun({ runId })) {
        /* to the end */
      }
    }
  } finally {
    transport.close();
    await mesh.shutdown();
  }
}, 120_000);
afterAll(() => fixture?.cleanup());

describe("lean-grpo runs (runs on disk)", () => {
  it("list: a table, newest first, and JSON lines with --json", async () => {
    const table = (await capture("list", undefined, { json: false })).trim().split("\n");
    expect(table[0]).toMatch(/^ID\s+STATE\s+ALGORITHM\s+STEP\s+CHECKPOINT\s+REWARD\s+PASS\s+CREATED$/);
    expect(table.slice(1).map((l) => l.split(/\s+/).slice(0, 5))).toEqual([
      ["second", "COMPLETED", "drgrpo", "2/2", "2"],
      ["first", "COMPLETED", "grpo", "2/2", "2"],
    ]);
    const lines = (await capture("list", undefined, { json: true }))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((r) => [r.id, r.state])).toEqual([
      ["second", "RUN_STATE_COMPLETED"],
      ["first", "RUN_STATE_COMPLETED"],
    ]);
  });

  it("show: the run's state, outputs and last metrics", async () => {
    const text = await capture("show", "first", { json: false });
    expect(text).toMatch(/^run\s+first$/m);
    expect(text).toMatch(/^state\s+COMPLETED$/m);
    expect(text).toMatch(/^steps\s+2\/2$/m);
    expect(text).toMatch(/^reward_mean\s+-?\d/m);
  });

  it("watch: the recorded steps, then the final state", async () => {
    const events = (await capture("watch", "first", { json: true }))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events.map((e) => e.event)).toEqual(["step", "step", "stateChange"]);
    expect(events.map((e) => e.step)).toEqual([1, 2, 2]);
    expect(events[2].state).toBe("COMPLETED");
    expect(events[0].timings.totalS).toBeGreaterThan(0);
  });

  it("says what is wrong: an unknown action, a missing id, an unknown run", async () => {
    await expect(capture("ls", undefined, {})).rejects.toThrow('unknown runs action "ls"; accepted: list, show, watch');
    await expect(capture("show", undefined, {})).rejects.toThrow("runs show needs a run id");
    const missing = await capture("show", "nope", {}).catch((e: unknown) => ConnectError.from(e));
    expect(missing).toBeInstanceOf(ConnectError);
    expect((missing as ConnectError).code).toBe(Code.NotFound);
    expect((missing as ConnectError).rawMessage).toMatch(/run nope not found/);
  });
});

describe("lean-grpo runs --url (a live orchestrator)", () => {
  it("watches a running run to its end and lists it", async () => {
    const mesh = await fixture.start();
    const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [mesh.urls.orchestrator!] });
    try {
      await client.startRun({ datasetPath: fixture.dataset, runId: "live", config: { training: tinyTraining(3) } });
      const events = (await capture("watch", "live", { url: mesh.urls.orchestrator!, json: true }))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(events.filter((e) => e.event === "step").map((e) => e.step)).toEqual([1, 2, 3]);
      expect(events.at(-1)).toMatchObject({ event: "stateChange", state: RunState[RunState.COMPLETED] });
      const listed = (await capture("list", undefined, { url: mesh.urls.orchestrator!, json: true }))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).id);
      expect(listed[0]).toBe("live");
    } finally {
      transport.close();
      await mesh.shutdown();
    }
  }, 60_000);
});
