// The page: the runs on the left (click to open one, tick to compare), the open run's
// summary, its charts (every spec of chart-specs.ts, compared runs on the same axes) with
// a smoothing slider and a log-scale switch, and its completions. Runs being watched
// stream their steps through WatchRun; the run list is refreshed with ListRuns.
import { Code, ConnectError } from "@connectrpc/connect";
import { RunState, type Run } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { CHARTS } from "./chart-specs.js";
import { h } from "./dom.js";
import { MetricChart, type ChartView } from "./metric-chart.js";
import { RunData } from "./run-data.js";
import type { RunSource } from "./run-source.js";
import { renderRunSummary } from "./run-summary-panel.js";
import { SamplesTable } from "./samples-table.js";

const FINAL = new Set([RunState.STOPPED, RunState.COMPLETED, RunState.FAILED]);
const LIST_REFRESH_MS = 3_000;

export class DashboardApp {
  private readonly runs = new Map<string, RunData>();
  private readonly watches = new Map<string, AbortController>();
  private listed: Run[] = [];
  private selected = "";
  private readonly compared = new Set<string>();
  private readonly view: ChartView = { smoothing: 0, log: false };
  private readonly charts = CHARTS.map((spec) => new MetricChart(spec));
  private readonly samples = new SamplesTable();
  private readonly runList: HTMLElement;
  private readonly summary: HTMLElement;
  private readonly status: HTMLElement;
  private drawQueued = false;
  /** A problem that outlasts refreshes (a refused token), shown instead of "connected". */
  private problem = "";

  constructor(
    private readonly source: RunSource,
    root: HTMLElement,
  ) {
    const slider = h("input", { type: "range", min: "0", max: "0.95", step: "0.05", value: "0", "aria-label": "smoothing" });
    const smoothingShown = h("output", {}, "0");
    const log = h("input", { type: "checkbox", class: "log" });
    const main = h(
      "main",
      {},
      h("section", { class: "summary" }),
      h(
        "section",
        { class: "controls" },
        h("label", {}, "smoothing ", slider, " ", smoothingShown),
        h("label", {}, log, " log scale (KL, grad norm, learning rate)"),
        h("span", { class: "compare-note" }),
      ),
      h("div", { class: "charts" }),
    );
    root.replaceChildren(
      h("header", { class: "top" }, h("h1", {}, "lean-grpo"), h("span", { class: "mode" }), h("span", { class: "status", role: "status" })),
      h(
        "div",
        { class: "layout" },
        h("nav", { class: "runs" }, h("h2", {}, "Runs"), h("p", { class: "hint" }, "click to open · tick to compare"), h("ul")),
        main,
      ),
    );
    root.querySelector(".mode")!.textContent =
      source.kind === "live" ? "live dashboard · WatchRun over Connect" : "offline report · data embedded in this page";
    this.runList = root.querySelector("nav.runs ul")!;
    this.summary = root.querySelector(".summary")!;
    this.status = root.querySelector(".status")!;
    const chartsBox = root.querySelector(".charts")!;
    for (const chart of this.charts) chartsBox.append(chart.element);
    main.append(this.samples.element);
    slider.addEventListener("input", () => {
      this.view.smoothing = Number(slider.value);
      smoothingShown.textContent = slider.value;
      this.draw();
    });
    log.addEventListener("change", () => {
      this.view.log = log.checked;
      this.draw();
    });
    window.addEventListener("resize", () => {
      for (const chart of this.charts) chart.resize();
    });
  }

  showProblem(text: string): void {
    this.problem = text;
    this.status.textContent = text;
    this.status.classList.add("down");
  }

  async start(): Promise<void> {
    await this.refreshList();
    const fromHash = decodeURIComponent(location.hash.slice(1));
    const first = this.listed.find((r) => r.id === fromHash) ?? this.listed.find((r) => !FINAL.has(r.state)) ?? this.listed[0];
    if (first) this.select(first.id);
    else this.summary.textContent = "No runs yet: start one with `lean-grpo train DATA --ui`, or point --runs-dir at a directory of runs.";
    if (this.source.kind === "live") setInterval(() => void this.refreshList(), LIST_REFRESH_MS);
  }

  private async refreshList(): Promise<void> {
    try {
      this.listed = await this.source.listRuns();
      this.problem = "";
      this.status.textContent = this.source.kind === "live" ? "connected" : "";
      this.status.classList.remove("down");
    } catch (error) {
      const refused = error instanceof ConnectError && error.code === Code.Unauthenticated;
      const why = error instanceof ConnectError ? error.rawMessage : error instanceof Error ? error.message : String(error);
      this.status.textContent = refused
        ? this.problem || "this dashboard needs its token: open the link `lean-grpo dashboard` printed (…/#token=…)"
        : `orchestrator unreachable: ${why}`;
      this.status.classList.add("down");
      return;
    }
    for (const run of this.listed) {
      const data = this.runs.get(run.id);
      // A run the list shows running again (resumed) needs a new watch.
      if (data && !FINAL.has(run.state) && !data.watching && this.isShown(run.id)) this.watch(run.id);
    }
    this.drawList();
  }

  private isShown(id: string): boolean {
    return id === this.selected || this.compared.has(id);
  }

  private drawList(): void {
    this.runList.replaceChildren(
      ...this.listed.map((run) => {
        const li = document.createElement("li");
        li.dataset.run = run.id;
        if (run.id === this.selected) li.classList.add("selected");
        const box = document.createElement("input");
        box.type = "checkbox";
        box.title = "compare";
        box.setAttribute("aria-label", `compare ${run.id}`);
        box.checked = this.compared.has(run.id) || run.id === this.selected;
        box.disabled = run.id === this.selected;
        box.addEventListener("change", () => this.toggleCompare(run.id, box.checked));
        // The state is one of the contract's names; the run's own texts are text nodes.
        const state = RunState[run.state] ?? "";
        const reward = run.lastMetrics.reward_mean;
        const button = h(
          "button",
          { type: "button" },
          h("span", { class: "id" }, run.id),
          h(
            "span",
            { class: "meta" },
            h("span", { class: `state state-${state.toLowerCase()}` }, state),
            ` ${run.algorithm} · ${run.step}/${run.totalSteps}${reward === undefined ? "" : ` · reward ${reward.toFixed(2)}`}`,
          ),
        );
        button.addEventListener("click", () => this.select(run.id));
        li.append(box, button);
        return li;
      }),
    );
  }

  select(id: string): void {
    this.selected = id;
    this.compared.delete(id);
    history.replaceState(null, "", `#${encodeURIComponent(id)}`);
    this.ensure(id);
    this.drawList();
    this.draw();
  }

  private toggleCompare(id: string, on: boolean): void {
    if (on) {
      this.compared.add(id);
      this.ensure(id);
    } else {
      this.compared.delete(id);
    }
    this.draw();
  }

  /** Loads a run's details and starts watching it, once. */
  private ensure(id: string): RunData {
    let data = this.runs.get(id);
    if (data) return data;
    data = new RunData(id);
    data.run = this.listed.find((r) => r.id === id);
    this.runs.set(id, data);
    void this.loadDetails(data);
    this.watch(id);
    return data;
  }

  private async loadDetails(data: RunData): Promise<void> {
    try {
      data.details = await this.source.getRun(data.id);
      if (data.details.run) data.run = data.details.run;
    } catch (error) {
      data.problem = `GetRun failed: ${error instanceof Error ? error.message : String(error)}`;
    }
    this.draw();
  }

  private watch(id: string): void {
    const data = this.runs.get(id)!;
    this.watches.get(id)?.abort();
    const controller = new AbortController();
    this.watches.set(id, controller);
    data.watching = true;
    void (async () => {
      try {
        for await (const event of this.source.watch(id, controller.signal)) {
          if (data.apply(event)) this.draw();
          if (event.event.case === "stateChange" && FINAL.has(event.event.value.state)) void this.loadDetails(data);
        }
      } catch (error) {
        if (!controller.signal.aborted) data.problem = `WatchRun ended: ${error instanceof Error ? error.message : String(error)}`;
      } finally {
        data.watching = false;
        this.draw();
      }
    })();
  }

  /** Redraws once per frame however many events arrive. */
  private draw(): void {
    if (this.drawQueued) return;
    this.drawQueued = true;
    requestAnimationFrame(() => {
      this.drawQueued = false;
      this.drawNow();
    });
  }

  private drawNow(): void {
    const main = this.runs.get(this.selected);
    if (!main) return;
    renderRunSummary(this.summary, main, this.source.kind === "offline");
    const shown = [main, ...[...this.compared].map((id) => this.runs.get(id)!).filter(Boolean)];
    document.querySelector(".compare-note")!.textContent =
      shown.length > 1 ? `comparing ${shown.length} runs: each chart shows its first metric per run` : "";
    // A binary reward is the pass rate: one chart says so instead of drawing it twice.
    const binary = shown.length === 1 && sameSeries(main.series("reward_mean")[1], main.series("pass_rate")[1]);
    for (const chart of this.charts) {
      if (chart.spec.id === "pass" && binary) {
        chart.element.hidden = true;
        continue;
      }
      chart.element.hidden = false;
      const title = chart.spec.id === "reward" && binary ? "Reward = pass rate (binary reward)" : undefined;
      chart.update(shown, this.view, title);
      // Charts of metrics this algorithm does not report (no KL at beta 0, say) fold away.
      chart.element.classList.toggle("empty", !chart.hasData);
    }
    this.samples.update(main.steps);
    document.body.dataset.steps = String(main.steps.length);
  }
}

function sameSeries(a: (number | null)[], b: (number | null)[]): boolean {
  return a.length > 0 && a.length === b.length && a.every((v, i) => v !== null && b[i] !== null && Math.abs(v - b[i]!) < 1e-12);
}
