// Repair mode over the real mesh on Lean: the tiny model writes a whole proof, the verifier
// runs it on the REPL stand-in (the real REPL protocol, answers by rules), which answers with
// an error and the goals left; that feedback is the environment turn of the second attempt,
// and it is what the samples file and the dashboard's data (WatchRun's step events) show.
// Each turn is a span of its own (rollout.turn), holding that turn's Generate and ScoreGroup.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { setupTracing, type TracingSetup } from "@lean-grpo/kit";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { StepRecord } from "@lean-grpo/orchestrator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";
import { withMesh } from "./support/orchestrator-client.js";
import { replStandIn, type ReplStandIn, type Rule } from "./support/repl-stand-in.js";

/** A line of samples.jsonl, as far as this test reads it. */
interface KeptSamples {
  step: number;
  samples: { solved: boolean; turns?: { completion: string; solved: boolean; verdict: string; feedback?: string }[] }[];
}

const CHROMIUM = "/usr/bin/chromium";
/** Where the screenshot of the opened trajectory goes (outside the repository unless REPAIR_SCREENSHOT says otherwise). */
const SCREENSHOT = process.env.REPAIR_SCREENSHOT ?? path.join(tmpdir(), "lean-grpo-dashboard", "repair-turns.png");

const STATEMENT = "theorem two_eq (n : Nat) (h : n = 2) : n + 0 = 2";
/** What Lean says about every attempt: an unknown identifier on the proof's line, and the goal it left. */
const LEAN_ERROR = "unknown identifier 'foo'";
const GOAL = "n : Nat\nh : n = 2\n⊢ n + 0 = 2";

const RULES: Rule[] = [
  {
    when: { cmd: { includes: "theorem two_eq" } },
    reply: {
      json: {
        messages: [
          { severity: "error", pos: { line: 2, column: 2 }, endPos: { line: 2, column: 5 }, data: LEAN_ERROR },
          { severity: "error", pos: { line: 1, column: 52 }, endPos: { line: 1, column: 54 }, data: `unsolved goals\n${GOAL}` },
        ],
        env: 0,
      },
    },
  },
];

const exporter = new InMemorySpanExporter();
let tracing: TracingSetup;
let fixture: MeshFixture;
let repl: ReplStandIn;
let dataset: string;

beforeAll(async () => {
  tracing = setupTracing({ serviceName: "repair-run-test", spanProcessors: [new SimpleSpanProcessor(exporter)], env: {} });
  // Lean text the model can write: letters, digits and spaces lex as Lean identifiers and numbers.
  fixture = await meshFixture({ extraChars: "abcdefghijklmnopqrstuvwxyz:⊢" });
  repl = replStandIn({ rules: RULES });
  dataset = path.join(fixture.dir, "lean.jsonl");
  await writeFile(
    dataset,
    ["two-1", "two-2"].map((id) => JSON.stringify({ id, name: "two_eq", statement: STATEMENT, imports: ["Init"] })).join("\n"),
  );
});
afterAll(async () => {
  repl?.cleanup();
  await fixture?.cleanup();
  await tracing?.shutdown();
});

describe("repair mode on the REPL stand-in", () => {
  it("feeds a failed attempt's Lean errors and goals into the second prompt, and keeps both turns in samples.jsonl and the step events", async () => {
    const runId = "repair-lean";
    const { done, events } = await withMesh(await fixture.start({ verifier: repl.verifierSection }), async (client) => {
      await client.startRun({
        datasetPath: path.basename(dataset),
        runId,
        config: {
          training: tinyTraining(2, { mode: "repair", seed: 1 }),
          rollout: { max_turns: 2, max_feedback_tokens: 170 },
          report: { samples_per_step: 4 },
          // The tiny model's context is 256 tokens: short prompts.
          prompt: { format: "text", lean_template: "{statement} := by\n", feedback_template: "{feedback}" },
        },
      });
      const events = [];
      for await (const event of client.watchRun({ runId, fromStart: true })) events.push(event);
      return { done: (await client.getRun({ runId })).run!, events };
    });
    expect(done.error).toBe("");
    expect(done.state).toBe(RunState.COMPLETED);

    const steps = (await readFile(path.join(done.outputDir, "metrics.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as StepRecord);
    for (const { metrics } of steps) {
      // Lean refuses every attempt: each trajectory takes both turns, and is one training sample.
      expect(metrics.repair_turns_mean).toBe(2);
      expect(metrics.pass_rate_turn1).toBe(0);
      if (metrics.trained === 1) expect(metrics.num_samples_trained).toBe(4);
    }

    const kept = (await readFile(path.join(done.outputDir, "samples.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .flatMap((l) => (JSON.parse(l) as KeptSamples).samples);
    expect(kept.length).toBeGreaterThan(0);
    for (const sample of kept) {
      expect(sample.turns).toHaveLength(2);
      const [first, second] = sample.turns!;
      expect(first!.solved).toBe(false);
      expect(second!.feedback).toBeUndefined();
      // The second prompt's environment turn: the verdict, Lean's errors with their lines, the goal left.
      if (first!.verdict === "ERROR") {
        expect(first!.feedback).toContain(`line 2, column 2: ${LEAN_ERROR}`);
        expect(first!.feedback).toContain("⊢ n + 0 = 2");
      } else {
        expect(first!.feedback).toContain(`Lean's verdict: ${first!.verdict}`);
      }
    }
    // Random text does not always lex as Lean (the token screen refuses it before the REPL): at least one reached Lean.
    expect(kept.some((s) => s.turns![0]!.verdict === "ERROR")).toBe(true);

    // The dashboard's data: the step events carry the same turns.
    const streamed = events.flatMap((e) => (e.event.case === "step" ? e.event.value.samples : []));
    expect(streamed.map((s) => s.turns.map((t) => t.feedback))).toEqual(kept.map((s) => s.turns!.map((t) => t.feedback ?? "")));
    const leanFeedback = streamed.flatMap((s) => s.turns).find((t) => t.verdict === "ERROR")!;
    expect(leanFeedback.feedback).toContain(LEAN_ERROR);

    // Every attempt went through the verifier: the REPL saw two proofs per trajectory it could lex.
    const checked = repl.requests().filter((r) => r.kind === "command" && r.cmd.includes("theorem two_eq"));
    expect(checked.length).toBeGreaterThan(0);

    // Traces: rollout.group → rollout.turn (1, then 2) → that turn's Generate call and its
    // rollout.score span (as whole-proof and tactic rollouts score) → the ScoreGroup call.
    const spans = exporter.getFinishedSpans();
    const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
    const parent = (span: ReadableSpan) => byId.get(span.parentSpanContext?.spanId ?? "");
    const groups = spans.filter((span) => span.name === "rollout.group" && span.attributes["leangrpo.mode"] === "repair");
    expect(groups).toHaveLength(2 * 2);
    for (const group of groups) {
      const turns = spans.filter((span) => span.name === "rollout.turn" && parent(span) === group);
      expect(turns.map((t) => t.attributes["leangrpo.turn"]).sort()).toEqual([1, 2]);
      for (const turn of turns) {
        const children = spans.filter((span) => parent(span) === turn);
        expect(children.map((span) => span.name)).toContain("leangrpo.v1.InferenceService/Generate");
        const scoring = children.filter((span) => span.name === "rollout.score");
        expect(scoring).toHaveLength(1);
        expect(spans.filter((span) => parent(span) === scoring[0]).map((span) => span.name)).toContain(
          "leangrpo.v1.RewardService/ScoreGroup",
        );
      }
    }

    // The dashboard page (the run's report.html, the same page from disk) in chromium: a completion opens as its turns.
    if (!existsSync(CHROMIUM)) {
      console.warn(`repair turns browser check skipped: ${CHROMIUM} is absent (apt-get install chromium; .ci/run installs it)`);
      return;
    }
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1400 } });
      await page.goto(`file://${path.join(done.outputDir, "report.html")}`);
      const row = page.locator(".samples tbody tr", { hasText: "2 turns" }).first();
      await row.click();
      const detail = page.locator(".sample-detail");
      await detail.locator("pre.feedback").first().waitFor();
      const headings = await detail.locator("h4").allTextContents();
      expect(headings.filter((h) => h.startsWith("Attempt "))).toHaveLength(2);
      expect(headings).toContain("Feedback (environment turn: conditioning only, not trained on)");
      // The filter searches the turns' feedback too.
      await page.locator(".samples input[type=search]").fill(LEAN_ERROR);
      await page.locator(".samples tbody tr").first().click();
      expect(await detail.locator("pre.feedback").first().textContent()).toContain(LEAN_ERROR);
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      console.info(`repair turns screenshot: ${SCREENSHOT}`);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
