// logging.mode=online against a loopback stand-in of the W&B API: the run is created with the
// resolved config (UpsertBucket, the API key's entity when logging.entity is unset), each step
// and held-out evaluation is a history row appended at increasing offsets with the summary, and
// the end marks the run complete with its exit code; the API key goes as Basic auth, user "api".
import { afterEach, describe, expect, it } from "vitest";
import { WandbTracker } from "../src/tracking/wandb/wandb-tracker.js";
import { resolveTracking, TrackingSchema } from "../src/tracking/tracking-config.js";
import { startWandbStandIn, type WandbStandIn } from "./tracking/wandb-stand-in.js";

let server: WandbStandIn | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("W&B online", () => {
  it("creates the run with its config, appends a row per step and completes it", async () => {
    server = await startWandbStandIn();
    const config = resolveTracking(TrackingSchema.parse({ project: "rlvr-vocab", base_url: server.url }), true);
    const tracker = new WandbTracker(config, { WANDB_API_KEY: "secret-key" });
    await tracker.start({ runId: "my_experiment-1", runDir: "/nonexistent", name: "my_experiment", config: { "training.steps": 2 } });
    await tracker.evaluation({ step: 0, heldout_accuracy: 0.5, solved: 2, problems: 4, seconds: 1 });
    await tracker.step({ step: 1, metrics: { "reward/mean": 0.25 }, timings: { total_s: 3 }, samples: [] });
    await tracker.step({ step: 2, metrics: { "reward/mean": 0.75 }, timings: { total_s: 3 }, samples: [] });
    await tracker.evaluation({ step: 2, heldout_accuracy: 1, solved: 4, problems: 4, seconds: 1 });
    await tracker.finish(false);

    const auth = `Basic ${Buffer.from("api:secret-key").toString("base64")}`;
    expect(server.requests.every((r) => r.authorization === auth)).toBe(true);
    const [viewer, upsert, ...streams] = server.requests;
    expect(String(viewer!.body.query)).toContain("viewer");
    expect(upsert!.body.variables).toMatchObject({
      name: "my_experiment-1",
      project: "rlvr-vocab",
      entity: "default-team",
      displayName: "my_experiment",
    });
    expect(JSON.parse(String((upsert!.body.variables as Record<string, unknown>).config))).toEqual({
      "training.steps": { value: 2, desc: null },
    });
    expect(streams.every((r) => r.path === "/files/default-team/rlvr-vocab/my_experiment-1/file_stream")).toBe(true);
    const appended = streams
      .filter((r) => r.body.files)
      .map((r) => (r.body.files as Record<string, { offset: number; content: string[] }>)["wandb-history.jsonl"]!);
    expect(appended.map((h) => h.offset)).toEqual([0, 1, 2]);
    const rows = appended.flatMap((h) => h.content.map((line) => JSON.parse(line) as Record<string, unknown>));
    expect(rows.map((r) => r._step)).toEqual([0, 1, 2]);
    expect(rows[0]).toMatchObject({ "eval/heldout_accuracy": 0.5 });
    expect(rows[2]).toMatchObject({ "train/reward/mean": 0.75, "time/total_s": 3, "eval/heldout_accuracy": 1 });
    const lastSummary = (streams.at(-2)!.body.files as Record<string, { content: string[] }>)["wandb-summary.json"]!.content[0]!;
    expect(JSON.parse(lastSummary)).toMatchObject({ "train/reward/mean": 0.75, "eval/heldout_accuracy": 1 });
    expect(streams.at(-1)!.body).toEqual({ complete: true, exitcode: 0 });
  });

  it("without WANDB_API_KEY refuses to start, saying what to set", async () => {
    const config = resolveTracking(TrackingSchema.parse({ mode: "online" }), true);
    await expect(new WandbTracker(config, {}).start({ runId: "r", runDir: "/nonexistent", name: "r", config: {} })).rejects.toThrow(
      /WANDB_API_KEY.*logging\.mode=offline/,
    );
  });
});
