// The completions kept per step, in a table people can filter (text in the prompt or
// completion, solved or not, one step) and open: the prompt, the completion, the reward
// of each scorer, the verdict and Lean's messages. With a reasoning vocabulary the text
// that reasoning tokens wrote is highlighted (CompletionSample.reasoning_spans).
import type { CompletionSample, StepEvent } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { h } from "./dom.js";

interface Row {
  step: number;
  sample: CompletionSample;
}

export class SamplesTable {
  readonly element: HTMLElement;
  private readonly search: HTMLInputElement;
  private readonly outcome: HTMLSelectElement;
  private readonly stepSelect: HTMLSelectElement;
  private readonly tbody: HTMLTableSectionElement;
  private readonly count: HTMLElement;
  private readonly detail: HTMLElement;
  private rows: Row[] = [];
  private open: Row | undefined;

  constructor() {
    this.search = h("input", {
      type: "search",
      placeholder: "filter prompt, completion, theorem, message",
      "aria-label": "filter completions",
    });
    this.outcome = h(
      "select",
      { "aria-label": "outcome" },
      new Option("solved and unsolved", ""),
      new Option("solved", "solved"),
      new Option("unsolved", "unsolved"),
    );
    this.stepSelect = h("select", { "aria-label": "step" }, new Option("every step", ""));
    this.count = h("span", { class: "count" });
    this.tbody = h("tbody");
    this.detail = h("article", { class: "sample-detail", hidden: "" });
    const head = h("tr", {}, ...["step", "theorem", "reward", "verdict", "tokens", "completion"].map((name) => h("th", {}, name)));
    this.element = h(
      "section",
      { class: "samples" },
      h("h2", {}, "Completions"),
      h("div", { class: "filters" }, this.search, this.outcome, this.stepSelect, this.count),
      h("div", { class: "samples-body" }, h("table", {}, h("thead", {}, head), this.tbody), this.detail),
    );
    for (const control of [this.search, this.outcome, this.stepSelect]) control.addEventListener("input", () => this.draw());
  }

  update(steps: readonly StepEvent[]): void {
    const rows = steps.flatMap((s) => s.samples.map((sample) => ({ step: Number(s.step), sample })));
    if (rows.length === this.rows.length) return;
    this.rows = rows;
    const chosen = this.stepSelect.value;
    const withSamples = steps.filter((s) => s.samples.length > 0).map((s) => String(s.step));
    this.stepSelect.replaceChildren(new Option("every step", ""), ...withSamples.reverse().map((s) => new Option(`step ${s}`, s)));
    this.stepSelect.value = withSamples.includes(chosen) ? chosen : "";
    this.draw();
  }

  private visible(): Row[] {
    const text = this.search.value.trim().toLowerCase();
    const step = this.stepSelect.value;
    return this.rows
      .filter(({ step: n, sample }) => {
        if (step && String(n) !== step) return false;
        if (this.outcome.value === "solved" && !sample.solved) return false;
        if (this.outcome.value === "unsolved" && sample.solved) return false;
        if (!text) return true;
        const turns = sample.turns.flatMap((t) => [t.completion, t.feedback, t.prompt]);
        return [sample.prompt, sample.completion, sample.theoremId, sample.verdict, ...sample.messages, ...turns].some((f) =>
          f.toLowerCase().includes(text),
        );
      })
      .reverse();
  }

  private draw(): void {
    const rows = this.visible();
    this.count.textContent = `${rows.length} of ${this.rows.length}`;
    this.tbody.replaceChildren(
      ...rows.map((row) => {
        const tr = document.createElement("tr");
        tr.className = row.sample.solved ? "solved" : "unsolved";
        tr.tabIndex = 0;
        const cells = [
          String(row.step),
          row.sample.theoremId,
          row.sample.reward.toFixed(3),
          row.sample.verdict || (row.sample.solved ? "solved" : "not solved"),
          String(row.sample.completionTokens),
          row.sample.turns.length > 1
            ? `${row.sample.turns.length} turns · ${oneLine(row.sample.completion)}`
            : oneLine(row.sample.completion),
        ];
        for (const text of cells) {
          const td = document.createElement("td");
          td.textContent = text;
          tr.append(td);
        }
        if (row.sample.reasoningSpans.length > 0 && row.sample.turns.length <= 1) {
          const last = tr.lastElementChild!;
          last.replaceChildren(highlighted(row.sample.completion, row.sample.reasoningSpans, 90));
        }
        if (row === this.open) tr.classList.add("open");
        const show = () => this.show(row);
        tr.addEventListener("click", show);
        tr.addEventListener("keydown", (e) => e.key === "Enter" && show());
        return tr;
      }),
    );
    if (rows.length === 0) {
      const why = this.rows.length === 0 ? "no completions kept yet (report.samples_per_step)" : "no completion matches the filter";
      this.tbody.append(h("tr", {}, h("td", { colspan: "6", class: "none" }, why)));
    }
  }

  private show(row: Row): void {
    this.open = row;
    const s = row.sample;
    this.detail.hidden = false;
    this.detail.replaceChildren();
    const add = (tag: string, text: string, className = "") => {
      const el = document.createElement(tag);
      el.textContent = text;
      if (className) el.className = className;
      this.detail.append(el);
      return el;
    };
    add("h3", `Step ${row.step} · ${s.theoremId} · ${s.groupId}`);
    add(
      "p",
      `reward ${s.reward.toFixed(3)} · ${s.solved ? "solved" : "not solved"}${s.verdict ? ` · ${s.verdict}` : ""} · ${s.completionTokens} tokens · ended by ${s.finishReason}${s.truncated ? " · texts cut to the size bound" : ""}`,
      s.solved ? "verdict solved" : "verdict unsolved",
    );
    const components = Object.entries(s.rewardComponents);
    if (components.length > 0) {
      add("h4", "Reward by scorer");
      const table = document.createElement("table");
      table.className = "components";
      for (const [scorer, value] of components) table.insertRow().append(cell(scorer), cell(value.toFixed(3)));
      this.detail.append(table);
    }
    add("h4", "Prompt");
    add("pre", s.prompt, "prompt");
    if (s.turns.some((turn) => turn.prompt !== "")) {
      // Tactic mode: each turn's prompt (the goals so far) and the tactic sampled from it; the completion is the assembled proof.
      s.turns.forEach((turn, i) => {
        add("h4", `Turn ${i + 1}${turn.verdict ? ` · ${turn.verdict}` : " · not applied"} · ${turn.completionTokens} tokens`);
        add("pre", turn.prompt, "prompt");
        add("pre", turn.completion, "completion");
      });
      add("h4", `Assembled proof · ${s.solved ? "solved" : "not solved"}`, s.solved ? "verdict solved" : "verdict unsolved");
      add("pre", s.completion, "completion");
    } else if (s.turns.length > 0) {
      // Repair mode: the trajectory as its attempts, each followed by the checker's feedback the model read next.
      s.turns.forEach((turn, i) => {
        add(
          "h4",
          `Attempt ${i + 1} · ${turn.solved ? "solved" : "not solved"}${turn.verdict ? ` · ${turn.verdict}` : ""} · reward ${turn.reward.toFixed(3)} · ${turn.completionTokens} tokens`,
          turn.solved ? "verdict solved" : "verdict unsolved",
        );
        add("pre", turn.completion, "completion");
        if (turn.feedback) {
          add("h4", "Feedback (environment turn: conditioning only, not trained on)");
          add("pre", turn.feedback, "feedback");
        }
      });
    } else {
      add("h4", s.reasoningSpans.length > 0 ? "Completion (reasoning tokens highlighted)" : "Completion");
      add("pre", "", "completion").append(highlighted(s.completion, s.reasoningSpans));
    }
    if (s.messages.length > 0) {
      add("h4", "Verifier and scorer messages");
      const list = document.createElement("ul");
      for (const m of s.messages) {
        const li = document.createElement("li");
        li.textContent = m;
        list.append(li);
      }
      this.detail.append(list);
    }
    this.draw();
  }
}

function cell(text: string): HTMLTableCellElement {
  const td = document.createElement("td");
  td.textContent = text;
  return td;
}

/**
 * The text with the code-point spans that reasoning tokens wrote in <mark class="reasoning">.
 * With `maxChars`, whitespace runs become one space and the text is cut there (as oneLine).
 */
function highlighted(text: string, spans: readonly { start: number; end: number }[], maxChars?: number): DocumentFragment {
  const chars = Array.from(text);
  const reasoning = new Uint8Array(chars.length);
  for (const { start, end } of spans) reasoning.fill(1, start, Math.min(end, chars.length));
  const fragment = document.createDocumentFragment();
  let shown = 0;
  let i = 0;
  while (i < chars.length && (maxChars === undefined || shown < maxChars)) {
    let j = i;
    while (j < chars.length && reasoning[j] === reasoning[i]) j++;
    let piece = chars.slice(i, j).join("");
    if (maxChars !== undefined) {
      piece = piece.replace(/\s+/g, " ");
      if (shown + piece.length > maxChars) piece = `${piece.slice(0, maxChars - shown)}…`;
    }
    shown += piece.length;
    if (reasoning[i]) {
      const mark = document.createElement("mark");
      mark.className = "reasoning";
      mark.title = "written with reasoning tokens";
      mark.textContent = piece;
      fragment.append(mark);
    } else fragment.append(piece);
    i = j;
  }
  return fragment;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 90 ? `${flat.slice(0, 90)}…` : flat;
}
