// The Python readers of the tracking tests: TensorBoard's own event reader and W&B's own
// record schema, run with TRACKING_PYTHON (default python3). A test whose package is missing
// there is skipped, with the reason.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const TRACKING_PYTHON = process.env.TRACKING_PYTHON ?? "python3";

/** Undefined when `module` imports; else why not (the skip reason). */
export function missingPythonModule(module: string, importLine = `import ${module}`): string | undefined {
  const result = spawnSync(TRACKING_PYTHON, ["-c", importLine], { encoding: "utf8" });
  if (result.status === 0) return undefined;
  return `${TRACKING_PYTHON} cannot import ${module} (set TRACKING_PYTHON to a Python with it): ${(result.stderr || String(result.error)).trim().split("\n").pop()}`;
}

export function runReader(script: "read_tfevents.py" | "read_wandb_log.py", arg: string): unknown {
  const file = fileURLToPath(new URL(script, import.meta.url));
  const result = spawnSync(TRACKING_PYTHON, [file, arg], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`${script} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as unknown;
}
