// A self-contained HTML report: reward, pass-rate and held-out accuracy curves as inline
// SVG, and the step table. No scripts, no external files, so it opens anywhere and can be attached to an issue.
import { writeFile } from "node:fs/promises";
import type { EvalRecord, StepRecord } from "./run-outputs.js";

const WIDTH = 640;
const HEIGHT = 240;
const PAD = 40;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
}

/** An SVG line chart of one metric over steps, with its min/max on the axis. */
export function lineChart(title: string, points: ReadonlyArray<[number, number]>): string {
  if (points.length === 0) return `<p>${escapeHtml(title)}: no steps yet</p>`;
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  let [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  if (y0 === y1) [y0, y1] = [y0 - 0.5, y1 + 0.5];
  const sx = (x: number) => PAD + (x1 === x0 ? 0.5 : (x - x0) / (x1 - x0)) * (WIDTH - 2 * PAD);
  const sy = (y: number) => HEIGHT - PAD - ((y - y0) / (y1 - y0)) * (HEIGHT - 2 * PAD);
  const path = points.map(([x, y], i) => `${i === 0 ? "M" : "L"}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(" ");
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="${escapeHtml(title)}">`,
    `<text x="${PAD}" y="20" font-size="14">${escapeHtml(title)}</text>`,
    `<line x1="${PAD}" y1="${HEIGHT - PAD}" x2="${WIDTH - PAD}" y2="${HEIGHT - PAD}" stroke="#888"/>`,
    `<line x1="${PAD}" y1="${PAD}" x2="${PAD}" y2="${HEIGHT - PAD}" stroke="#888"/>`,
    `<text x="4" y="${PAD + 4}" font-size="10">${y1.toFixed(3)}</text>`,
    `<text x="4" y="${HEIGHT - PAD}" font-size="10">${y0.toFixed(3)}</text>`,
    `<text x="${PAD}" y="${HEIGHT - PAD + 14}" font-size="10">step ${x0}</text>`,
    `<text x="${WIDTH - PAD - 40}" y="${HEIGHT - PAD + 14}" font-size="10">step ${x1}</text>`,
    `<path d="${path}" fill="none" stroke="#1f77b4" stroke-width="2"/>`,
    ...points.map(
      ([x, y]) =>
        `<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="2.5" fill="#1f77b4"><title>step ${x}: ${y}</title></circle>`,
    ),
    `</svg>`,
  ].join("\n");
}

export function reportHtml(title: string, steps: readonly StepRecord[], evals: readonly EvalRecord[] = []): string {
  const series = (key: string) =>
    steps.filter((s) => Number.isFinite(s.metrics[key])).map((s) => [s.step, s.metrics[key]!] as [number, number]);
  const columns = ["reward_mean", "pass_rate", "loss", "kl", "completion_length_mean"];
  const rows = steps
    .map(
      (s) =>
        `<tr><td>${s.step}</td>${columns.map((c) => `<td>${s.metrics[c]?.toFixed(4) ?? ""}</td>`).join("")}<td>${s.timings.total_s?.toFixed(2) ?? ""}</td></tr>`,
    )
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}</style>
</head><body>
<h1>${escapeHtml(title)}</h1>
${lineChart("reward (mean over the batch)", series("reward_mean"))}
${lineChart("pass rate (solved completions)", series("pass_rate"))}
${
  evals.length > 0
    ? lineChart(
        "held-out greedy accuracy",
        evals.map((e) => [e.step, e.heldout_accuracy] as [number, number]),
      )
    : ""
}
${evals.length > 0 ? `<p>held-out greedy accuracy: ${evals.map((e) => `step ${e.step}: ${(100 * e.heldout_accuracy).toFixed(1)}% (${e.solved}/${e.problems})`).join(", ")}</p>` : ""}
<table><tr><th>step</th>${columns.map((c) => `<th>${c}</th>`).join("")}<th>seconds</th></tr>
${rows}
</table>
</body></html>
`;
}

export async function writeReport(
  file: string,
  title: string,
  steps: readonly StepRecord[],
  evals: readonly EvalRecord[] = [],
): Promise<void> {
  await writeFile(file, reportHtml(title, steps, evals));
}
