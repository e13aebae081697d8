// One chart of the page: a uPlot line chart with a titled, unit-labelled y axis, step
// ticks, gridlines, a legend with values under the cursor, an optional log scale and
// EMA smoothing (the raw curve stays faint behind the smoothed one). One run: every
// metric of the spec; several runs: the spec's first metric, one line per run.
import uPlot from "uplot";
import { PALETTE, type ChartSpec } from "./chart-specs.js";
import { h } from "./dom.js";
import type { RunData } from "./run-data.js";
import { alignSeries, smooth } from "./smoothing.js";

export interface ChartView {
  smoothing: number;
  log: boolean;
}

interface Line {
  label: string;
  color: string;
  values: [number[], (number | null)[]];
}

export class MetricChart {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  private plot: uPlot | undefined;
  private shape = "";
  /** Whether it had any value to draw the last time it was updated. */
  hasData = false;

  constructor(readonly spec: ChartSpec) {
    this.element = document.createElement("section");
    this.element.className = "chart";
    this.element.dataset.chart = spec.id;
    this.body = document.createElement("div");
    this.element.append(this.body);
  }

  update(runs: readonly RunData[], view: ChartView, title = this.spec.title): void {
    const lines = this.lines(runs);
    this.hasData = lines.some((l) => l.values[1].some((v) => v !== null));
    if (!this.hasData) {
      this.destroy();
      this.body.replaceChildren(h("div", { class: "chart-empty" }, h("h3", {}, title), h("p", {}, "no values yet")));
      return;
    }
    const log = view.log && this.spec.log === true && lines.every((l) => l.values[1].every((v) => v === null || v > 0));
    const drawn: Line[] = [];
    const series: uPlot.Series[] = [{ label: "step" }];
    for (const line of lines) {
      if (view.smoothing > 0) {
        drawn.push(line);
        series.push({ label: `${line.label} (raw)`, stroke: `${line.color}40`, width: 1, spanGaps: true, points: { show: false } });
        drawn.push({ ...line, values: [line.values[0], smooth(line.values[1], view.smoothing)] });
      } else {
        drawn.push(line);
      }
      series.push({
        label: line.label,
        stroke: line.color,
        width: 2,
        spanGaps: true,
        points: { show: line.values[0].length < 40, size: 5 },
        value: (_u, v) => (v === null || v === undefined ? "–" : this.format(v)),
      });
    }
    const data = alignSeries(drawn.map((l) => l.values)) as uPlot.AlignedData;
    const shape = JSON.stringify([title, log, series.map((s) => s.label), Boolean(view.smoothing)]);
    const width = Math.max(280, this.element.clientWidth - 16);
    if (this.plot && shape === this.shape) {
      this.plot.setData(data);
      return;
    }
    this.destroy();
    this.body.replaceChildren();
    this.shape = shape;
    this.plot = new uPlot(this.options(title, series, log, width), data, this.body);
  }

  resize(): void {
    if (this.plot) this.plot.setSize({ width: Math.max(280, this.element.clientWidth - 16), height: 220 });
  }

  destroy(): void {
    this.plot?.destroy();
    this.plot = undefined;
    this.shape = "";
  }

  private lines(runs: readonly RunData[]): Line[] {
    const values = (run: RunData, key: string) => (this.spec.heldout ? run.heldout() : run.series(key));
    if (runs.length === 1) {
      const [run] = runs;
      return this.spec.keys.map((key, i) => ({
        label: this.spec.labels[i] ?? key,
        color: PALETTE[i % PALETTE.length]!,
        values: values(run!, key),
      }));
    }
    return runs.map((run, i) => ({ label: run.id, color: PALETTE[i % PALETTE.length]!, values: values(run, this.spec.keys[0]!) }));
  }

  /** Fractions span 0–100 % at least; a flat line gets a band around it, not uPlot's 0–100. */
  private yRange(min: number, max: number): [number, number] {
    if (this.spec.percent) return [Math.min(0, min), Math.max(1, max)];
    if (min === max) {
      const pad = Math.abs(min) > 0 ? Math.abs(min) * 0.1 : 1;
      return [min - pad, max + pad];
    }
    const pad = (max - min) * 0.05;
    return [min - pad, max + pad];
  }

  private format(v: number): string {
    if (this.spec.percent) return `${(100 * v).toFixed(1)}%`;
    const a = Math.abs(v);
    return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(2) : v.toFixed(a < 1 ? 4 : 2);
  }

  private options(title: string, series: uPlot.Series[], log: boolean, width: number): uPlot.Options {
    const tickValues = (_u: uPlot, ticks: number[]) =>
      ticks.map((t) => (this.spec.percent ? `${+(100 * t).toFixed(1)}%` : log ? t.toExponential(0) : String(+t.toPrecision(4))));
    return {
      title,
      width,
      height: 220,
      series,
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
      scales: { x: { time: false }, y: log ? { distr: 3 } : { range: (_u, min, max) => this.yRange(min, max) } },
      axes: [
        {
          label: "step",
          incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000],
          grid: { stroke: "#e5e7eb" },
          ticks: { stroke: "#d1d5db" },
          values: (_u, ticks) => ticks.map((t) => String(t)),
        },
        {
          label: this.spec.unit + (log ? " (log)" : ""),
          grid: { stroke: "#e5e7eb" },
          ticks: { stroke: "#d1d5db" },
          values: tickValues,
          size: 64,
        },
      ],
    };
  }
}
