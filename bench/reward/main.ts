// bench/reward: math_answer scores per second on one core, and ScoreGroup latency
// for a group of 8 through gRPC with the verifier and its REPL stand-in, each
// against baselines measured in the same run. Prints JSON.
// Usage: npx tsx bench/reward/main.ts [SECONDS] [LATENCY_CALLS] [LEAN_MS]
import { execFileSync, spawnSync } from "node:child_process";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { measureGroupLatency } from "./group-latency.js";

const seconds = Number(process.argv[2] ?? 3);
const calls = Number(process.argv[3] ?? 200);
const leanMs = Number(process.argv[4] ?? 0);
const here = fileURLToPath(new URL(".", import.meta.url));

// One core: the scoring runs pinned to CPU 0 where taskset exists.
const pinned = spawnSync("taskset", ["-c", "0", "true"]).status === 0;
const argv = ["--import", "tsx", `${here}math-throughput.ts`, String(seconds)];
const mathOutput = pinned ? execFileSync("taskset", ["-c", "0", process.execPath, ...argv]) : execFileSync(process.execPath, argv);
const math = JSON.parse(mathOutput.toString());

const latency = [];
for (const lean of [...new Set([leanMs, 50])]) {
  latency.push({ leanMsPerCheck: lean, verifierWorkers: 4, ...(await measureGroupLatency({ calls, leanMs: lean, workers: 4 })) });
}

process.stdout.write(
  `${JSON.stringify(
    {
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
      mathAnswer: { pinnedToOneCore: pinned, goalScoresPerSecond: 2000, ...math },
      scoreGroupOf8: latency,
    },
    null,
    2,
  )}\n`,
);
