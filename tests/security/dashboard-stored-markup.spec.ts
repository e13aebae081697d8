// Stored markup in a run folder, planted by someone who can write in runs_dir: every text
// field of run.json, config.json, metrics.jsonl, samples.jsonl and eval.jsonl carries
// elements, event handlers, `javascript:` URLs, attribute-breaking quotes, SVG and requests
// to another host. The live dashboard (auth on, `--runs-dir`) and report.html, opened in
// Chromium, show all of it as text: the page has exactly the elements and attributes it has
// for a run of the same shape with plain text, the planted text is readable on the page, no
// planted handler runs, no Content-Security-Policy violation is reported, and no request
// leaves the page (the live page asks its own origin only; report.html asks nothing).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { OrchestratorService, type WatchRunResponse } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { dashboardCommand } from "@lean-grpo/cli";
import { renderOfflineReport } from "@lean-grpo/dashboard";
import { loadConfig } from "@lean-grpo/kit";
import { createOrchestratorService, OrchestratorConfigSchema, RunOutputs } from "@lean-grpo/orchestrator";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const CHROMIUM = "/usr/bin/chromium";
const MESH_TOKEN = "stored-markup-mesh-t0ken-5e1f";
const RUN_ID = "run-1";
/** A host that never resolves: a request to it is the page reaching outside (and is aborted before it goes). */
const EXFIL = "http://exfil.invalid";
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium)
  console.warn(`dashboard stored-markup test skipped: ${CHROMIUM} is absent (apt-get install chromium; .ci/run installs it)`);

/** Everything a page could be tricked into running or fetching; `pwned` is a binding that records a call. */
const PAYLOADS = [
  (tag: string) => `<img src=x onerror="pwned('${tag}:img')">`,
  (tag: string) => `<script>pwned('${tag}:script')</script>`,
  (tag: string) => `javascript:pwned('${tag}:url')`,
  (tag: string) => `"><svg onload="pwned('${tag}:svg')"><circle r="9"/></svg>`,
  (tag: string) => `' autofocus onfocus='pwned("${tag}:quote")' x='`,
  (tag: string) => `<iframe srcdoc="<script>parent.pwned('${tag}:iframe')</script>"></iframe>`,
  (tag: string) => `<a href="javascript:pwned('${tag}:a')">open</a>`,
  (tag: string) => `<img src="${EXFIL}/${tag}.png"><link rel=stylesheet href="${EXFIL}/${tag}.css">`,
  (tag: string) => `<div style="background:url(${EXFIL}/${tag}.bg)">${tag}</div><!--`,
  (tag: string) => `</script></textarea></title><b>${tag}</b>`,
];

/** One field's planted text: every payload, tagged with the field; the clean run has plain text of its own. */
const planted = (field: string) => `${field} ${PAYLOADS.map((p) => p(field)).join(" ")}`;
const plain = (field: string) => `${field} plain text, long enough for the reasoning spans to fall inside it`;

/** A finished run with one of each thing the page shows; `say` fills every text field (and every key that is shown). */
async function writeRunFolder(runsDir: string, say: (field: string) => string): Promise<void> {
  const outputs = RunOutputs.for(runsDir, RUN_ID);
  await outputs.create({
    run: { [say("config.key")]: say("config.value"), algorithm: say("config.algorithm") },
    dataset: say("config.dataset"),
  });
  await outputs.writeRun({
    ...{ id: RUN_ID, state: "COMPLETED", algorithm: say("run.algorithm"), step: 2, total_steps: 2, dataset: say("run.dataset") },
    ...{ created_at: "2026-01-01T00:00:00.000Z", updated_at: "2026-01-01T00:02:00.000Z", error: say("run.error") },
    last_checkpoint_step: 2,
    checkpointed: true,
    last_metrics: { reward_mean: 0.5, pass_rate: 0.5, [say("run.last_metrics.key")]: 1 },
    reasoning: {
      n_s: 10,
      n_r: 4,
      map_sha256: say("run.reasoning.map_sha256"),
      mask: say("run.reasoning.mask"),
      markers: [say("run.reasoning.start"), say("run.reasoning.end")],
    },
  });
  const timings = {
    generate_s: 1,
    verify_s: 0.5,
    score_s: 0.1,
    train_s: 2,
    sync_s: 0.2,
    other_s: 0.1,
    total_s: 3.9,
    [say("timings.key")]: 1,
  };
  for (const step of [1, 2]) {
    const tag = (field: string) => say(`step${step}.${field}`);
    await outputs.appendStep({
      step,
      time: `2026-01-01T00:0${step}:00.000Z`,
      adapter_version: step,
      metrics: { reward_mean: 0.25 * step, pass_rate: 0.25 * step, loss: 1 / step, kl: 0.01 * step, [tag("metric.key")]: step },
      timings,
      samples: [
        {
          ...{ group_id: tag("group_id"), theorem_id: tag("theorem_id"), prompt: tag("prompt"), completion: tag("completion") },
          ...{ reward: 1, reward_components: { [tag("scorer")]: 1 }, solved: true, verdict: tag("verdict") },
          ...{ messages: [tag("message.0"), tag("message.1")], completion_tokens: 12, finish_reason: tag("finish_reason") },
          truncated: false,
          reasoning_spans: [
            [2, 6],
            [10, 14],
          ],
        },
        {
          ...{ group_id: tag("repair.group_id"), theorem_id: tag("repair.theorem_id"), prompt: tag("repair.prompt") },
          ...{ completion: tag("repair.completion"), reward: 0, reward_components: { [tag("repair.scorer")]: 0 } },
          ...{ solved: false, verdict: tag("repair.verdict"), messages: [tag("repair.message")], completion_tokens: 20 },
          ...{ finish_reason: tag("repair.finish_reason"), truncated: true },
          turns: [
            {
              completion: tag("turn1.completion"),
              reward: 0,
              solved: false,
              verdict: tag("turn1.verdict"),
              feedback: tag("turn1.feedback"),
              completion_tokens: 8,
            },
            { completion: tag("turn2.completion"), reward: 0, solved: false, verdict: tag("turn2.verdict"), completion_tokens: 12 },
          ],
        },
        {
          ...{ group_id: tag("tactic.group_id"), theorem_id: tag("tactic.theorem_id"), prompt: tag("tactic.prompt") },
          ...{ completion: tag("tactic.completion"), reward: 1, reward_components: {}, solved: true, verdict: "PROVED" },
          ...{ messages: [], completion_tokens: 6, finish_reason: "STOP", truncated: false },
          turns: [
            {
              ...{ completion: tag("tactic.turn1.completion"), reward: 1, solved: true, verdict: tag("tactic.turn1.verdict") },
              ...{ completion_tokens: 3, prompt: tag("tactic.turn1.prompt") },
            },
            {
              completion: tag("tactic.turn2.completion"),
              reward: 1,
              solved: true,
              verdict: "",
              completion_tokens: 3,
              prompt: tag("tactic.turn2.prompt"),
            },
          ],
        },
      ],
    });
  }
  for (const step of [0, 2]) {
    await outputs.appendEval({
      ...{ step, heldout_accuracy: 0.4 + 0.1 * step, solved: 4 + step, problems: 10, seconds: 1.5 },
      forms: { [say(`eval${step}.form`)]: 1 } as never,
      ...({ note: say(`eval${step}.note`) } as object),
    });
  }
}

/** The fields the page shows whole (the table cuts texts to one line; these are in the summary, list or detail). */
const SHOWN_WHOLE = [
  "run.algorithm",
  "run.dataset",
  "run.error",
  "config.value",
  "config.dataset",
  "step2.prompt",
  "step2.completion",
  "step2.verdict",
  "step2.finish_reason",
  "step2.message.0",
  "step2.message.1",
  "step2.scorer",
  "step2.theorem_id",
  "step2.group_id",
  "step2.turn1.completion",
  "step2.turn1.feedback",
  "step2.turn2.verdict",
  "step2.tactic.turn1.prompt",
  "step2.tactic.turn1.verdict",
  "step2.tactic.turn2.prompt",
  "step2.tactic.turn2.completion",
  "step2.tactic.completion",
];

/** Every element of the page as its tag and attribute names (never values): what markup in data would add to. */
const SHAPE = `(() => {
  const counts = {};
  for (const e of document.querySelectorAll("*")) {
    const key = e.tagName.toLowerCase() + "[" + [...e.attributes].map((a) => a.name).sort().join(" ") + "]";
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
})()`;

/** CSP violations the page reports (blocked inline script or style, a blocked fetch), recorded from the first byte. */
const RECORD_VIOLATIONS = `window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI));`;

interface Seen {
  /** The page's elements and attribute names, first as drawn, then with each completion open. */
  shapes: Record<string, number>[];
  /** What a reader sees, with each completion open in turn. */
  text: string;
  /** Requests beyond the page's own origin (live) or its own file (report.html). */
  outside: string[];
  violations: string[];
}

let browser: Browser;
let dir: string;

describe.skipIf(!haveChromium)("a run folder's stored markup, in the dashboard and report.html", () => {
  const runsDirs = { clean: "", planted: "" };
  const calls: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "stored-markup-"));
    runsDirs.clean = path.join(dir, "clean");
    runsDirs.planted = path.join(dir, "planted");
    await writeRunFolder(runsDirs.clean, plain);
    await writeRunFolder(runsDirs.planted, planted);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
    });
  });
  afterAll(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A page that records every planted call, every CSP violation and every request it makes
   * beyond `allowed` (aborted before it goes: nothing reaches the network however the page is fooled).
   */
  async function newPage(allowed: (url: string) => boolean, outside: string[]): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1600 } });
    await page.exposeFunction("pwned", (what: string) => void calls.push(what));
    await page.addInitScript(RECORD_VIOLATIONS);
    await page.route("**/*", (route) => (allowed(route.request().url()) ? route.continue() : route.abort()));
    page.on("request", (r) => {
      if (!allowed(r.url())) outside.push(r.url());
    });
    return page;
  }

  /** Opens each completion in turn (repair trajectories and plain ones draw different details) and records the page's shape each time. */
  async function readPage(page: Page, outside: string[]): Promise<Seen> {
    await page.waitForSelector('[data-chart="reward"] canvas');
    // Polled from here: the page's policy refuses the string evaluation that waitForFunction polls with.
    await expect.poll(() => page.locator("body").getAttribute("data-steps")).toBe("2");
    await expect.poll(() => page.locator(".samples tbody tr").count()).toBe(6);
    await page.waitForSelector(".config");
    const shapes = [(await page.evaluate(SHAPE)) as Record<string, number>];
    const texts: string[] = [];
    for (let row = 0; row < 6; row++) {
      await page.locator(".samples tbody tr").nth(row).click();
      await page.waitForSelector(".sample-detail:not([hidden])");
      await page.evaluate("for (const d of document.querySelectorAll('details')) d.open = true");
      shapes.push((await page.evaluate(SHAPE)) as Record<string, number>);
      texts.push((await page.evaluate("document.body.innerText")) as string);
    }
    // Give a planted image, frame or handler time to fire before reading what happened.
    await page.waitForTimeout(300);
    const seen = {
      shapes,
      text: texts.join("\n"),
      outside: [...outside],
      violations: (await page.evaluate("window.__violations")) as string[],
    };
    // The policy is in force, and its violations are seen: an HTML string is refused outright.
    const probe = await page.evaluate(`(() => {
      try { document.body.insertAdjacentHTML("beforeend", "<b>probe</b>"); return "accepted"; } catch { return "refused"; }
    })()`);
    expect(probe, "an HTML string given to the page").toBe("refused");
    await expect.poll(() => page.evaluate("window.__violations.join()")).toContain("require-trusted-types-for");
    return seen;
  }

  async function livePage(runsDir: string): Promise<Seen> {
    const ui = await dashboardCommand({ port: "0", host: "127.0.0.1", runsDir }, { meshToken: MESH_TOKEN });
    const origin = new URL(ui.url).origin;
    const outside: string[] = [];
    const page = await newPage((url) => URL.parse(url)?.origin === origin, outside);
    try {
      expect(ui.authOn).toBe(true);
      await page.goto(`${ui.pageUrl}&${RUN_ID}`);
      return await readPage(page, outside);
    } finally {
      await page.close();
      await ui.close();
    }
  }

  /** report.html as the orchestrator writes it for a finished run: GetRun's answer, its replayed steps and its final state. */
  async function reportPage(runsDir: string): Promise<Seen> {
    const { impl } = createOrchestratorService(loadConfig(OrchestratorConfigSchema, { flags: { runs_dir: runsDir } }));
    const client = createClient(
      OrchestratorService,
      createRouterTransport((router) => router.service(OrchestratorService, impl)),
    );
    const events: WatchRunResponse[] = [];
    for await (const event of client.watchRun({ runId: RUN_ID, fromStart: true })) events.push(event);
    const file = path.join(runsDir, RUN_ID, "report.html");
    writeFileSync(file, await renderOfflineReport({ details: await client.getRun({ runId: RUN_ID }), events }));
    const outside: string[] = [];
    const page = await newPage((url) => url === `file://${file}`, outside);
    try {
      await page.goto(`file://${file}`);
      return await readPage(page, outside);
    } finally {
      await page.close();
    }
  }

  for (const [name, open] of [
    ["the live dashboard", livePage],
    ["report.html", reportPage],
  ] as const) {
    it(`${name} shows every planted field as text, adds no element or attribute, runs nothing and fetches nothing outside`, async () => {
      calls.length = 0;
      const clean = await open(runsDirs.clean);
      expect(clean.violations).toEqual([]);
      expect(calls).toEqual([]);
      const attacked = await open(runsDirs.planted);
      expect.soft(calls, "planted handlers that ran").toEqual([]);
      expect.soft(attacked.shapes).toEqual(clean.shapes);
      for (const field of SHOWN_WHOLE) {
        // The config is shown as JSON, its quotes escaped.
        const shown = field.startsWith("config.") ? JSON.stringify(planted(field)).slice(1, -1) : planted(field);
        expect(attacked.text.includes(shown), `${field} shown as text`).toBe(true);
      }
      expect(attacked.violations).toEqual([]);
      expect(clean.outside).toEqual([]);
      expect(attacked.outside, "requests that left the page").toEqual([]);
    }, 120_000);
  }
});
