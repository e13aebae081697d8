// The selected run at a glance: state (and its error, in red), steps, algorithm, dataset,
// times, where a step's time goes, the last metrics, checkpoints and adapters, the
// resolved config and the run's log lines.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { PALETTE, TIME_PHASES } from "./chart-specs.js";
import { runFileHref } from "./dom.js";
import type { RunData } from "./run-data.js";

/** The run's replay refusals over its steps; undefined for a run whose steps never report them (math runs). */
export function exploitsCaught(metrics: readonly Record<string, number>[]): number | undefined {
  const counts = metrics.map((m) => m.verifier_replay_refusals).filter((n): n is number => n !== undefined);
  return counts.length === 0 ? undefined : counts.reduce((a, b) => a + b, 0);
}

export function renderRunSummary(target: HTMLElement, data: RunData, offline: boolean): void {
  const run = data.run;
  target.replaceChildren();
  if (!run) {
    target.append(text("p", data.problem || "loading…"));
    return;
  }
  const state = RunState[run.state] ?? "UNSPECIFIED";
  const head = el("div", "run-head");
  head.append(text("h2", run.id), text("span", state, `state state-${state.toLowerCase()}`));
  target.append(head);
  if (run.error) target.append(text("pre", run.error, "run-error"));
  if (data.problem) target.append(text("p", data.problem, "run-error"));

  const steps = data.steps;
  const total = steps.reduce((a, s) => a + (s.timings?.totalS ?? 0), 0);
  const facts: [string, string][] = [
    ["algorithm", run.algorithm],
    // The run message is as of its last state change; the steps streamed since are newer.
    ["steps", `${Math.max(Number(run.step), Number(steps.at(-1)?.step ?? 0))} / ${run.totalSteps}`],
    ["last checkpoint", `step ${run.lastCheckpointStep}`],
    ["dataset", run.dataset],
    ["created", run.createdAt ? timestampDate(run.createdAt).toLocaleString() : "–"],
    ["updated", run.updatedAt ? timestampDate(run.updatedAt).toLocaleString() : "–"],
    [
      "training time",
      `${total.toFixed(1)} s over ${steps.length} steps${steps.length ? ` (${(total / steps.length).toFixed(2)} s/step)` : ""}`,
    ],
  ];
  const last = steps.at(-1)?.metrics ?? run.lastMetrics;
  for (const [key, label, pct] of [
    ["reward_mean", "reward", false],
    ["pass_rate", "pass rate", true],
    ["heldout_accuracy", "held-out accuracy", true],
  ] as const) {
    const v = key === "heldout_accuracy" ? data.heldout()[1].at(-1) : last[key];
    if (v !== undefined && v !== null) facts.push([`last ${label}`, pct ? `${(100 * v).toFixed(1)}%` : v.toFixed(3)]);
  }
  // Lean runs: proofs the REPL called PROVED that the verifier's kernel replay refused.
  const caught = exploitsCaught(steps.map((s) => s.metrics));
  if (caught !== undefined) facts.push(["exploits caught", caught === 0 ? "0" : `${caught} (replay refusals: see the run's log)`]);
  const dl = el("dl", "facts");
  for (const [k, v] of facts) {
    const pair = el("div", k === "exploits caught" && caught ? "alarm" : "");
    pair.append(text("dt", k), text("dd", v));
    dl.append(pair);
  }
  target.append(dl);

  if (total > 0) target.append(timeSplit(steps.map((s) => s.timings!).filter(Boolean), total));

  const details = data.details;
  const outputDir = run.outputDir;
  if (details && (details.checkpoints.length > 0 || details.adapters.length > 0)) {
    const box = el("div", "artifacts");
    box.append(text("h3", "Checkpoints and adapters"), text("p", `in ${outputDir}`, "muted"));
    for (const [label, paths] of [
      ["checkpoints", details.checkpoints],
      ["adapters", details.adapters],
    ] as const) {
      const p = el("p", "");
      p.append(text("strong", `${label}: `));
      paths.forEach((rel, i) => {
        // Offline the report sits in the run directory; live, the dashboard serves the run's files.
        const a = document.createElement("a");
        a.href = runFileHref(offline ? "" : `/files/${encodeURIComponent(run.id)}/`, rel);
        a.textContent = rel.split("/").pop()!;
        if (i > 0) p.append(" · ");
        p.append(a);
      });
      if (paths.length === 0) p.append("none yet");
      box.append(p);
    }
    target.append(box);
  }
  if (details?.config) {
    const config = document.createElement("details");
    config.className = "config";
    config.append(text("summary", "Config"), text("pre", JSON.stringify(details.config, null, 2)));
    target.append(config);
  }
  if (data.logs.length > 0) {
    const logs = document.createElement("details");
    logs.className = "logs";
    logs.append(text("summary", `Log (${data.logs.length} lines)`), text("pre", data.logs.join("\n")));
    target.append(logs);
  }
}

/** One bar: the share of the run's step time each phase took, with seconds on hover; and the generation it hid. */
function timeSplit(timings: { [k: string]: unknown }[], total: number): HTMLElement {
  const box = el("div", "time-split");
  box.append(text("h3", "Where the step time went"));
  const bar = el("div", "bar");
  const legend = el("div", "bar-legend");
  TIME_PHASES.forEach(([field, label], i) => {
    const seconds = timings.reduce((a, t) => a + Number(t[field] ?? 0), 0);
    const share = seconds / total;
    if (share <= 0) return;
    const part = el("span", "");
    part.style.width = `${(100 * share).toFixed(2)}%`;
    part.style.background = PALETTE[i % PALETTE.length]!;
    part.title = `${label}: ${seconds.toFixed(1)} s (${(100 * share).toFixed(1)}%)`;
    bar.append(part);
    const key = text("span", `${label} ${(100 * share).toFixed(1)}% · ${seconds.toFixed(1)} s`);
    key.style.setProperty("--swatch", PALETTE[i % PALETTE.length]!);
    legend.append(key);
  });
  box.append(bar, legend);
  // training.async: the next step's rollouts sample while a step trains. That time is in no
  // step's wall time (so not in the bar); saying so keeps "train 98%" from reading as idle sampling.
  const hidden = timings.reduce((a, t) => a + Number(t.rolloutOverlapS ?? 0), 0);
  if (hidden > 0) {
    box.append(
      text(
        "p",
        `generation hidden behind training: ${hidden.toFixed(1)} s (the next step's rollouts, sampled while a step trained; beside the bar, not in it)`,
        "time-hidden",
      ),
    );
  }
  return box;
}

function el(tag: string, className: string): HTMLElement {
  const e = document.createElement(tag);
  if (className) e.className = className;
  return e;
}

function text(tag: string, content: string, className = ""): HTMLElement {
  const e = el(tag, className);
  e.textContent = content;
  return e;
}
