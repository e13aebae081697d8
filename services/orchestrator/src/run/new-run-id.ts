// A fresh run's id, which names its directory under runs_dir: `[<exp_name>-]<UTC time>-<4 hex>`,
// so runs sort by name in time order within an experiment and two started in the same second differ.
import { randomBytes } from "node:crypto";
import { RunConfigSchema } from "./run-config.js";

/** Throws naming exp_name when it cannot name a directory (the schema's rule: a client may call this before StartRun). */
export function newRunId(expName = "", now = new Date()): string {
  const checked = RunConfigSchema.shape.exp_name.safeParse(expName);
  if (!checked.success) throw new Error(`exp_name ${JSON.stringify(expName)} ${checked.error.issues[0]?.message ?? "is not accepted"}`);
  const time = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "").replace("T", "-");
  return `${expName ? `${expName}-` : ""}${time}-${randomBytes(2).toString("hex")}`;
}
