// `lean-grpo runs [list | show ID | watch ID]`: the runs an orchestrator knows, through
// OrchestratorService — a remote one (`--url`), or one started here on loopback over
// `--runs-dir` (the same gRPC path either way).
import type { Command } from "commander";
import { toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { OrchestratorService, RunSchema, RunState, StepTimingsSchema, type Run } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createLogger, createServiceClient, loadConfig, serve } from "@lean-grpo/kit";
import { OrchestratorConfigSchema } from "@lean-grpo/orchestrator";
import { createOrchestratorService } from "@lean-grpo/orchestrator";

export interface RunsCommandOptions {
  url?: string;
  runsDir: string;
  json?: boolean;
}

const ACTIONS = ["list", "show", "watch"] as const;

export function registerRunsCommand(program: Command): void {
  program
    .command("runs")
    .description("list runs, show one, or watch one's steps as they finish")
    .argument("[action]", ACTIONS.join(" | "), "list")
    .argument("[id]", "run id (show, watch)")
    .option("--url <url>", "a running orchestrator, e.g. http://127.0.0.1:50055 (default: read --runs-dir here)")
    .option("--runs-dir <dir>", "where runs live", "runs")
    .option("--json", "JSON lines (default when stdout is not a TTY)")
    .action(async (action: string, id: string | undefined, options: RunsCommandOptions) => {
      await runsCommand(action, id, options, (text) => process.stdout.write(text));
    });
}

export async function runsCommand(
  action: string,
  id: string | undefined,
  options: RunsCommandOptions,
  write: (text: string) => void,
): Promise<void> {
  if (!(ACTIONS as readonly string[]).includes(action)) throw new Error(`unknown runs action "${action}"; accepted: ${ACTIONS.join(", ")}`);
  if (action !== "list" && !id) throw new Error(`runs ${action} needs a run id`);
  const json = options.json ?? !process.stdout.isTTY;
  const local = options.url
    ? undefined
    : await serve({
        name: "orchestrator",
        logger: quietLogger(),
        services: [createOrchestratorService(loadConfig(OrchestratorConfigSchema, { flags: { runs_dir: options.runsDir } }))],
        config: loadConfig(OrchestratorConfigSchema, { flags: { server: { port: 0, shutdown: { drain_delay_ms: 0 } } } }).server,
      });
  const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [options.url ?? local!.url] });
  try {
    if (action === "list") {
      const runs: Run[] = [];
      let pageToken = "";
      do {
        const page = await client.listRuns({ pageToken });
        runs.push(...page.runs);
        pageToken = page.nextPageToken;
      } while (pageToken);
      write(json ? runs.map((r) => `${JSON.stringify(toJson(RunSchema, r))}\n`).join("") : runTable(runs));
    } else if (action === "show") {
      const { run } = await client.getRun({ runId: id! });
      write(json ? `${JSON.stringify(toJson(RunSchema, run!))}\n` : describeRun(run!));
    } else {
      for await (const event of client.watchRun({ runId: id!, fromStart: true })) {
        const e = event.event;
        if (json) {
          const value =
            e.case === "step"
              ? {
                  step: Number(e.value.step),
                  metrics: e.value.metrics,
                  timings: e.value.timings ? toJson(StepTimingsSchema, e.value.timings) : {},
                }
              : e.case === "stateChange"
                ? { state: RunState[e.value.state], step: Number(e.value.step), error: e.value.error }
                : { log: e.value };
          write(`${JSON.stringify({ run: event.runId, event: e.case, ...value })}\n`);
        } else if (e.case === "step") {
          const m = e.value.metrics;
          write(
            `step ${e.value.step}  reward ${fmt(m.reward_mean)}  pass ${pct(m.pass_rate)}  loss ${fmt(m.loss)}  ${e.value.timings?.totalS.toFixed(2) ?? "-"}s\n`,
          );
        } else if (e.case === "stateChange") {
          write(`state ${RunState[e.value.state]} at step ${e.value.step}${e.value.error ? `: ${e.value.error}` : ""}\n`);
        } else if (e.case === "log") {
          write(`${e.value}\n`);
        }
      }
    }
  } finally {
    transport.close();
    await local?.shutdown();
  }
}

/** The local orchestrator is a detail of this command: its start/stop lines would only be noise. */
function quietLogger() {
  const logger = createLogger("orchestrator");
  if (!process.env.LOG_LEVEL && logger.level !== "silent") logger.level = "warn";
  return logger;
}

function fmt(x: number | undefined): string {
  return x === undefined ? "-" : x.toFixed(3);
}
function pct(x: number | undefined): string {
  return x === undefined ? "-" : `${(100 * x).toFixed(1)}%`;
}

function runTable(runs: Run[]): string {
  if (runs.length === 0) return "no runs\n";
  const rows = [
    ["ID", "STATE", "ALGORITHM", "STEP", "CHECKPOINT", "REWARD", "PASS", "CREATED"],
    ...runs.map((r) => [
      r.id,
      RunState[r.state],
      r.algorithm,
      `${r.step}/${r.totalSteps}`,
      String(r.lastCheckpointStep),
      fmt(r.lastMetrics.reward_mean),
      pct(r.lastMetrics.pass_rate),
      r.createdAt ? timestampDate(r.createdAt).toISOString() : "-",
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  return rows
    .map(
      (row) =>
        `${row
          .map((cell, c) => cell.padEnd(widths[c]!))
          .join("  ")
          .trimEnd()}\n`,
    )
    .join("");
}

function describeRun(run: Run): string {
  const lines = [
    ["run", run.id],
    ["state", RunState[run.state]],
    ["algorithm", run.algorithm],
    ["steps", `${run.step}/${run.totalSteps}`],
    ["checkpoint", String(run.lastCheckpointStep)],
    ["dataset", run.dataset],
    ["outputs", run.outputDir],
    ["report", `${run.outputDir}/report.html`],
    ...(run.error ? [["error", run.error]] : []),
    ...Object.entries(run.lastMetrics)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => [k, String(v)]),
  ];
  return lines.map(([k, v]) => `${k!.padEnd(24)}${v}\n`).join("");
}
