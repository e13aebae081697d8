// The dashboard in a real browser (playwright-core + Debian's chromium) during a real run
// of a mesh that requires its token: a page opened without the dashboard's link shows no run;
// opened by the link (#token=…), a new step arrives on the chart over WatchRun/Connect, a
// completion opens, a second run is compared on the same charts, a checkpoint's files are
// listed, a failed run shows its error, and report.html of a finished run draws the same
// page from disk with no server. Saves a screenshot.
import { existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { OrchestratorService, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { AUTH_TOKEN_ENV, callerAuth, createServiceClient } from "@lean-grpo/kit";
import { RunOutputs } from "@lean-grpo/orchestrator";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dashboardCommand } from "../src/commands/dashboard-command.js";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";

const CHROMIUM = "/usr/bin/chromium";
const MESH_TOKEN = "browser-test-mesh-t0ken";
/** Where the screenshot goes (outside the repository unless DASHBOARD_SCREENSHOT says otherwise). */
const SCREENSHOT = process.env.DASHBOARD_SCREENSHOT ?? path.join(tmpdir(), "lean-grpo-dashboard", "dashboard.png");
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`dashboard browser test skipped: ${CHROMIUM} is absent (apt-get install chromium; .ci/run installs it)`);

describe.skipIf(!haveChromium)("the dashboard in chromium", () => {
  let fixture: MeshFixture;
  let browser: Browser;
  beforeAll(async () => {
    fixture = await meshFixture();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await fixture?.cleanup();
  });

  it("streams a live run, opens a completion, compares two runs, shows a failed run's error", async () => {
    const mesh = await fixture.start({ auth: { env: { [AUTH_TOKEN_ENV]: MESH_TOKEN } } });
    const { client, transport } = createServiceClient(OrchestratorService, {
      endpoints: [mesh.urls.orchestrator!],
      interceptors: callerAuth(mesh.token),
    });
    // As `train --ui` starts it: relaying with the mesh's token, and requiring one of the page.
    const ui = await dashboardCommand(
      { url: mesh.urls.orchestrator!, port: "0", host: "127.0.0.1", runsDir: fixture.runsDir },
      { meshToken: mesh.token },
    );
    expect(ui.pageUrl).toMatch(/#token=/);
    // Without the link's token the page loads, and shows no run but why.
    const stranger = await browser.newPage();
    try {
      await stranger.goto(ui.url);
      await expect.poll(() => stranger.locator(".status").textContent()).toContain("this dashboard needs its token");
      expect(await stranger.locator("li[data-run]").count()).toBe(0);
    } finally {
      await stranger.close();
    }
    const page = await browser.newPage({ viewport: { width: 1400, height: 1700 } });
    const offsite: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(ui.url) && !r.url().startsWith("data:")) offsite.push(r.url());
    });
    try {
      // A finished run to compare with, then a longer one to watch live.
      await client.startRun({
        datasetPath: fixture.dataset,
        runId: "first",
        // Async, so its second step's rollouts ran hidden behind the first step's training.
        config: { training: tinyTraining(2, { async: true }), report: { samples_per_step: 3 } },
      });
      await mesh.runs.settle();
      await client.startRun({
        datasetPath: fixture.dataset,
        runId: "live",
        config: { training: tinyTraining(8), report: { samples_per_step: 3 } },
      });
      // A failed run as the orchestrator leaves one on disk.
      const failed = RunOutputs.for(fixture.runsDir, "broken");
      await failed.create({ run: {}, dataset: "d.jsonl" });
      const when = new Date().toISOString();
      await failed.writeRun({
        ...{ id: "broken", state: RunState[RunState.FAILED], algorithm: "grpo", step: 1, total_steps: 5, dataset: "d.jsonl" },
        ...{ created_at: "2020-01-01T00:00:00Z", updated_at: when, last_checkpoint_step: 0, last_metrics: {} },
        error: "learner lost: UNAVAILABLE; resume with --resume broken from the checkpoint of step 0",
      });

      await page.goto(`${ui.pageUrl}&live`);
      await page.waitForSelector('[data-chart="reward"] canvas');
      // The token left the address bar (and history) as the page traded it for its session.
      expect(page.url()).toBe(`${ui.url}#live`);
      // The page sets <body data-steps> to the steps it has drawn of the open run.
      // Polled from here: the page's Content-Security-Policy refuses the string evaluation waitForFunction polls with.
      const stepsShown = async () => Number((await page.locator("body").getAttribute("data-steps")) ?? "0");
      await expect.poll(stepsShown, { timeout: 60_000 }).toBeGreaterThanOrEqual(1);
      const before = await stepsShown();
      // A step that finishes now reaches the chart through the open WatchRun stream.
      await expect.poll(stepsShown, { timeout: 60_000 }).toBeGreaterThan(before);
      expect(await page.locator(".run-head .state").textContent()).toMatch(/RUNNING|COMPLETED/);
      // Titled charts with a legend per metric (axes and their units are drawn on the canvas: see the screenshot).
      expect(await page.locator('[data-chart="reward"] .u-title').textContent()).toMatch(/Reward/);
      expect(await page.locator('[data-chart="length"] .u-legend').textContent()).toMatch(/mean[\s\S]*min[\s\S]*max/);
      // The sampler–learner mismatch and rollout-correction metrics (verl's rollout_corr names) have their charts.
      expect(await page.locator('[data-chart="mismatch"] .u-legend').textContent()).toMatch(/k3 KL[\s\S]*adapter check/);
      expect(await page.locator('[data-chart="rollout-correction"] .u-legend').textContent()).toMatch(/effective sample size/);

      // A completion opens with its prompt, completion and reward by scorer.
      await page.locator(".samples tbody tr").first().click();
      const detail = page.locator(".sample-detail");
      await expect.poll(() => detail.isVisible()).toBe(true);
      expect(await detail.textContent()).toMatch(/Prompt[\s\S]*Completion/);
      expect(await detail.locator("pre.prompt").textContent()).toContain("boxed");
      await page.locator(".filters select").first().selectOption("unsolved");
      expect(await page.locator(".filters .count").textContent()).toMatch(/^\d+ of \d+$/);

      // Compare with the first run: one line per run on each chart.
      await page.locator('li[data-run="first"] input[type="checkbox"]').check();
      await expect.poll(() => page.locator(".compare-note").textContent()).toContain("comparing 2 runs");
      await expect.poll(() => page.locator('[data-chart="reward"] .u-legend').textContent()).toContain("first");
      // Smoothing keeps the raw curve faint behind the smoothed one.
      await page.locator('input[type="range"]').fill("0.6");
      await expect.poll(() => page.locator('[data-chart="reward"] .u-legend').textContent()).toContain("(raw)");
      mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      console.info(`dashboard screenshot: ${SCREENSHOT}`);

      // A checkpoint's files, as its link in the summary fetches them: with the page's session cookie.
      const listing = await page.request.get(`${ui.url}files/first/checkpoints/step-2/`);
      expect(listing.status()).toBe(200);
      expect(await listing.text()).toContain('href="trainer_state.json"');

      // The failed run says why.
      await page.locator('li[data-run="broken"] button').click();
      await expect.poll(() => page.locator(".run-error").first().textContent()).toContain("learner lost: UNAVAILABLE");
      expect(await page.locator(".run-head .state").textContent()).toBe("FAILED");
      expect(offsite).toEqual([]);
    } finally {
      await page.close();
      await client.stopRun({ runId: "live" }).catch(() => {});
      await mesh.runs.settle();
      transport.close();
      await ui.close();
      await mesh.shutdown();
    }
    // The finished run's report.html: the same page from disk, its data inside, nothing fetched.
    const report = await browser.newPage({ viewport: { width: 1400, height: 1200 } });
    const fetched: string[] = [];
    report.on("request", (r) => {
      if (!r.url().startsWith("file:") && !r.url().startsWith("data:")) fetched.push(r.url());
    });
    try {
      await report.goto(`file://${path.join(fixture.runsDir, "first", "report.html")}`);
      await report.waitForSelector('[data-chart="reward"] canvas');
      expect(await report.locator(".mode").textContent()).toContain("offline report");
      expect(await report.locator("body").getAttribute("data-steps")).toBe("2");
      expect(await report.locator(".run-head .state").textContent()).toBe("COMPLETED");
      expect(await report.locator(".samples tbody tr").count()).toBe(6);
      expect(await report.locator(".time-split .time-hidden").textContent()).toMatch(/^generation hidden behind training: \d+\.\d s /);
      expect(await report.locator(".artifacts a").first().getAttribute("href")).toBe("checkpoints/step-0/");
      expect(fetched).toEqual([]);
    } finally {
      await report.close();
    }
  }, 240_000);
});
