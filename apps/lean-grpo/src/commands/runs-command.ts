// `lean-grpo runs [list | show ID | watch ID]`: the runs an orchestrator knows, through
// OrchestratorService of a remote one (`--url`), or else read from `--runs-dir` by the
// orchestrator's own run manager in this process: a command that only reads starts no server.
import type { Command } from "commander";
import { toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  OrchestratorService,
  RunSchema,
  RunState,
  StepTimingsSchema,
  type Run,
  type WatchRunResponse,
} from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createServiceClient, loadConfig, callerAuth, envAuthToken } from "@lean-grpo/kit";
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
  const source = options.url ? remoteRuns(options.url) : localRuns(options.runsDir);
  try {
    if (action === "list") {
      const runs = await source.list();
      write(json ? runs.map((r) => `${JSON.stringify(toJson(RunSchema, r))}\n`).join("") : runTable(runs));
    } else if (action === "show") {
      const run = await source.get(id!);
      write(json ? `${JSON.stringify(toJson(RunSchema, run))}\n` : describeRun(run, process.stdout.columns ?? 100));
    } else {
      for await (const event of source.watch(id!)) {
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
    source.close();
  }
}

/** What `runs` reads runs from: an orchestrator over gRPC, or the run manager over a runs folder. */
interface RunsSource {
  list(): Promise<Run[]>;
  get(id: string): Promise<Run>;
  watch(id: string): AsyncIterable<WatchRunResponse>;
  close(): void;
}

function remoteRuns(url: string): RunsSource {
  const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [url], interceptors: callerAuth(envAuthToken()) });
  return {
    async list() {
      const runs: Run[] = [];
      let pageToken = "";
      do {
        const page = await client.listRuns({ pageToken });
        runs.push(...page.runs);
        pageToken = page.nextPageToken;
      } while (pageToken);
      return runs;
    },
    get: async (id) => (await client.getRun({ runId: id })).run!,
    watch: (id) => client.watchRun({ runId: id, fromStart: true }),
    close: () => transport.close(),
  };
}

function localRuns(runsDir: string): RunsSource {
  // The same RunManager that answers ListRuns/GetRun/WatchRun, over the same files.
  const { runs } = createOrchestratorService(loadConfig(OrchestratorConfigSchema, { flags: { runs_dir: runsDir } }));
  const stop = new AbortController();
  return {
    list: () => runs.list(),
    get: (id) => runs.get(id),
    watch: (id) => runs.watch(id, true, stop.signal),
    close: () => stop.abort(),
  };
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

/** `key  value` lines, keys in one column, values wrapped to the terminal so nothing runs into its key. */
export function describeRun(run: Run, width: number): string {
  const lines: [string, string][] = [
    ["run", run.id],
    ["state", RunState[run.state]],
    ["algorithm", run.algorithm],
    ["steps", `${run.step}/${run.totalSteps}`],
    ["checkpoint", String(run.lastCheckpointStep)],
    ["dataset", run.dataset],
    ["outputs", run.outputDir],
    ["report", `${run.outputDir}/report.html`],
    ...(run.error ? [["error", run.error] as [string, string]] : []),
    ...Object.entries(run.lastMetrics)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => [k, Number.isInteger(v) ? String(v) : v.toPrecision(4)] as [string, string]),
  ];
  const keyWidth = Math.max(...lines.map(([k]) => k.length)) + 2;
  const valueWidth = Math.max(20, width - keyWidth);
  return lines
    .map(([k, v]) =>
      wrapValue(v, valueWidth)
        .map((part, i) => `${(i === 0 ? k : "").padEnd(keyWidth)}${part}\n`)
        .join(""),
    )
    .join("");
}

function wrapValue(text: string, width: number): string[] {
  const parts: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      parts.push(line);
      line = "";
    }
    // A word longer than the width (a path) is cut, not left to overflow.
    let rest = word;
    while (rest.length > width) {
      if (line) parts.push(line);
      parts.push(rest.slice(0, width));
      rest = rest.slice(width);
      line = "";
    }
    line = line ? `${line} ${rest}` : rest;
  }
  if (line || parts.length === 0) parts.push(line);
  return parts;
}
