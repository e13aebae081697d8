// Which trackers a run uses, from seed 003's logging.* and TRL's report_to.
import { describe, expect, it } from "vitest";
import { resolveTracking, TrackingSchema } from "./tracking-config.js";

const resolve = (section: Record<string, unknown>, keysGiven = Object.keys(section).length > 0, env: NodeJS.ProcessEnv = {}) =>
  resolveTracking(TrackingSchema.parse(section), keysGiven, env);

describe("logging section", () => {
  it("sends nothing unless asked; a logging.* key turns it on as seed 003's default does; enabled=false wins", () => {
    expect(resolve({}).trackers).toEqual([]);
    expect(resolve({ mode: "offline" })).toMatchObject({ trackers: ["wandb"], mode: "offline", project: "rlvr-vocab" });
    expect(resolve({ enabled: false, mode: "offline" }).trackers).toEqual([]);
    expect(resolve({ enabled: true }).trackers).toEqual(["wandb"]);
  });
  it("mode=disabled turns W&B off and leaves TensorBoard", () => {
    expect(resolve({ mode: "disabled" }).trackers).toEqual([]);
    expect(resolve({ mode: "disabled", report_to: ["wandb", "tensorboard"] }).trackers).toEqual(["tensorboard"]);
  });
  it("reads report_to as TRL does: a list, one name, all or none", () => {
    expect(resolve({ report_to: "tensorboard" }).trackers).toEqual(["tensorboard"]);
    expect(resolve({ report_to: "all" }).trackers).toEqual(["wandb", "tensorboard"]);
    expect(resolve({ report_to: "none" }).trackers).toEqual([]);
    expect(() => TrackingSchema.parse({ report_to: ["mlflow"] })).toThrow();
    expect(() => TrackingSchema.parse({ mode: "sometimes" })).toThrow();
  });
  it("takes the W&B server from logging.base_url, else WANDB_BASE_URL, else W&B's", () => {
    expect(resolve({ enabled: true }).baseUrl).toBe("https://api.wandb.ai");
    expect(resolve({ enabled: true }, true, { WANDB_BASE_URL: "http://wandb.internal:8080/" }).baseUrl).toBe("http://wandb.internal:8080");
    expect(resolve({ enabled: true, base_url: "http://127.0.0.1:9/" }).baseUrl).toBe("http://127.0.0.1:9");
  });
});
