// A fresh run's id, which names its directory under runs_dir: `[<exp_name>-]<UTC time>-<4 hex>`,
// so runs sort by name in time order within an experiment and two started in the same second differ.
import { randomBytes } from "node:crypto";

export function newRunId(expName = "", now = new Date()): string {
  const time = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "").replace("T", "-");
  return `${expName ? `${expName}-` : ""}${time}-${randomBytes(2).toString("hex")}`;
}
