// One `lean-grpo train` child process for the benches that compare whole runs (bench/algorithms,
// bench/repair): its stdout kept in a log file, its wall time, and the run folder's JSON Lines.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { readJsonObjects } from "@lean-grpo/jsonl";

export interface TrainRun {
  code: number;
  wallS: number;
  /** The command as a user would type it. */
  command: string;
}

/** Runs `npx lean-grpo train …args`, printing the command on stderr (after `label`) and writing stdout to `logFile`. */
export function runTrain(args: readonly string[], logFile: string, label: string): Promise<TrainRun> {
  const command = `npx lean-grpo train ${args.join(" ")}`;
  process.stderr.write(`${label}: ${command}\n`);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn("npx", ["lean-grpo", "train", ...args], { stdio: ["ignore", "pipe", "inherit"] });
    let log = "";
    child.stdout.on("data", (chunk: Buffer) => {
      log += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      writeFileSync(logFile, log);
      resolve({ code: code ?? 1, wallS: (performance.now() - started) / 1000, command });
    });
  });
}

/** A run folder's JSON Lines file (metrics.jsonl, eval.jsonl); none when the run did not get to write it. */
export function readRunLines<T>(file: string): T[] {
  if (!existsSync(file)) return [];
  return readJsonObjects(readFileSync(file, "utf8"), file).map(({ record }) => record as T);
}
