// How long a service process takes from spawn to serving, as its image starts it now
// (node on the esbuild bundle, services/<service>/dist/server.mjs, deploy/docker/bundle-service.mjs)
// against the baseline it replaced (node --import tsx on services/<service>/src/server.ts),
// in the same run, alternating, on this machine's repository checkout. Prints one JSON line
// per service and a summary line. Usage: npx tsx bench/deploy/service-start.ts [ROUNDS] [SERVICE...]
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { percentile } from "../support/percentile.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const [roundsArg, ...named] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 5);
const services = named.length > 0 ? named : ["inference", "verifier", "reward", "learner", "orchestrator"];

/** Milliseconds from spawn to the "serving" log line; the process is then stopped. */
async function startMs(args: string[]): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [...args, "--port", "0", "server.shutdown.drain_delay_ms=0"], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "info", NODE_ENV: "production" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  try {
    for await (const line of createInterface({ input: child.stderr! })) {
      if (line.includes('"msg":"serving"')) return performance.now() - started;
    }
    throw new Error(`${args.join(" ")} exited before serving`);
  } finally {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  }
}

const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
const summary: Record<string, number> = {};
for (const service of services) {
  execFileSync(process.execPath, ["deploy/docker/bundle-service.mjs", service], { cwd: ROOT, stdio: "ignore" });
  const tsx: number[] = [];
  const compiled: number[] = [];
  // One untimed start of each first (file cache), then alternate so load drifts hit both.
  await startMs(["--import", "tsx", `services/${service}/src/server.ts`]);
  await startMs([`services/${service}/dist/server.mjs`]);
  for (let i = 0; i < rounds; i++) {
    tsx.push(await startMs(["--import", "tsx", `services/${service}/src/server.ts`]));
    compiled.push(await startMs([`services/${service}/dist/server.mjs`]));
  }
  const result = {
    service,
    rounds,
    tsx_median_ms: Math.round(median(tsx)),
    compiled_median_ms: Math.round(median(compiled)),
    compiled_over_tsx: Number((median(compiled) / median(tsx)).toFixed(2)),
  };
  summary[service] = result.compiled_over_tsx;
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
process.stdout.write(`${JSON.stringify({ summary: "compiled / tsx start time (median)", ...summary })}\n`);
