// WatchRun never ends without the run's final state. A run's state turns final before its
// final state event is emitted (run.json and report.html are written in between); a watcher
// that joins in that window must still receive COMPLETED. The window is held open
// deterministically: the report renderer, called inside it, starts the watchers there.
// Each state event is also the state at that moment, not an alias of the live run.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { RunState, StartRunRequestSchema, type WatchRunResponse } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { OrchestratorConfigSchema, createOrchestratorService, type RunReport } from "@lean-grpo/orchestrator";
import { loadConfig } from "@lean-grpo/kit";
import type { RunningMesh } from "../src/mesh/start-mesh.js";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";

let fixture: MeshFixture;
let mesh: RunningMesh;
beforeAll(async () => {
  fixture = await meshFixture();
  mesh = await fixture.start();
}, 60_000);
afterAll(async () => {
  await mesh?.shutdown();
  await fixture?.cleanup();
});

async function collect(events: AsyncIterable<WatchRunResponse>): Promise<RunState[]> {
  const states: RunState[] = [];
  for await (const event of events) if (event.event.case === "stateChange") states.push(event.event.value.state);
  return states;
}

describe("WatchRun and the end of a run", () => {
  it("a watcher that joins while the run's final files are written still gets COMPLETED", async () => {
    const config = loadConfig(OrchestratorConfigSchema, {
      flags: {
        runs_dir: fixture.runsDir,
        // The dataset is named relative to the orchestrator's data_root (the fixture's directory).
        data_root: fixture.dir,
        services: { inference: mesh.urls.inference, reward: mesh.urls.reward, learner: mesh.urls.learner, verifier: mesh.urls.verifier },
      },
    });
    const joined: Promise<RunState[]>[] = [];
    const watchers = new AbortController();
    let runs: ReturnType<typeof createOrchestratorService>["runs"] | undefined;
    const renderReport = async ({ details }: RunReport) => {
      const run = details.run!;
      if (run.state === RunState.COMPLETED && joined.length === 0) {
        // Inside the window: run.state is final, the final event is not emitted yet.
        joined.push(collect(runs!.watch(run.id, false, watchers.signal)), collect(runs!.watch(run.id, true, watchers.signal)));
        // Let the watchers replay what there is (and, before the fix, end) before the window closes.
        await new Promise((resolve) => setImmediate(resolve));
      }
      return "<html></html>";
    };
    const service = createOrchestratorService(config, { renderReport });
    runs = service.runs;
    try {
      await runs.start(
        create(StartRunRequestSchema, { datasetPath: fixture.dataset, runId: "race", config: { training: tinyTraining(1) } }),
      );
      await runs.settle();
      expect(joined).toHaveLength(2);
      // A bound, so a watcher that would wait forever fails the test instead of hanging it.
      const timeout = setTimeout(() => watchers.abort(), 5_000);
      const [live, fromStart] = await Promise.all(joined);
      clearTimeout(timeout);
      expect(live?.at(-1)).toBe(RunState.COMPLETED);
      expect(fromStart).toEqual([RunState.RUNNING, RunState.COMPLETED]);

      // And one that joins after the end, without the history, gets the final state alone.
      expect(await collect(runs.watch("race", false, new AbortController().signal))).toEqual([RunState.COMPLETED]);
    } finally {
      watchers.abort();
      await runs.shutdown();
    }
  }, 60_000);
});
