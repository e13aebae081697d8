// The dashboard's port: the page at "/" (script and styles inline, nothing else to fetch),
// OrchestratorService over Connect on HTTP/1.1 for the browser's client (here the same
// connect-web transport the page uses, on Node's fetch), 404 elsewhere; a report embeds
// its data so that a "</script>" in a completion cannot end the script early.
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import {
  GetRunResponseSchema,
  OrchestratorService,
  RunSchema,
  RunState,
  WatchRunResponseSchema,
} from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { afterEach, describe, expect, it } from "vitest";
import { renderOfflineReport, startDashboardServer, type DashboardServer } from "../src/index.js";

const run = create(RunSchema, { id: "r1", state: RunState.RUNNING, algorithm: "grpo", totalSteps: 3n });
const stepEvent = (n: number, completion = "\\boxed{4}") =>
  create(WatchRunResponseSchema, {
    runId: "r1",
    event: { case: "step", value: { step: BigInt(n), metrics: { reward_mean: n / 3 }, samples: [{ completion, prompt: "2+2" }] } },
  });

describe("dashboard server", () => {
  let server: DashboardServer | undefined;
  afterEach(async () => server?.close());

  it("serves the page and answers the page's Connect calls, streaming included", async () => {
    server = await startDashboardServer({
      orchestrator: {
        listRuns: () => ({ runs: [run] }),
        getRun: ({ runId }) => ({ run: { ...run, id: runId } }),
        async *watchRun() {
          yield stepEvent(1);
          yield stepEvent(2);
        },
      },
      port: 0,
    });
    const page = await fetch(server.url);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain('<div id="app"></div>');
    expect(html).not.toMatch(/<script src=|<link /);
    expect((await fetch(`${server.url}nothing`)).status).toBe(404);

    const client = createClient(OrchestratorService, createConnectTransport({ baseUrl: server.url.replace(/\/$/, "") }));
    expect((await client.listRuns({})).runs.map((r) => r.id)).toEqual(["r1"]);
    const steps: number[] = [];
    for await (const event of client.watchRun({ runId: "r1", fromStart: true })) {
      if (event.event.case === "step") steps.push(Number(event.event.value.step));
    }
    expect(steps).toEqual([1, 2]);
  });

  it("renders report.html with the run's data inside and a script-safe embedding", async () => {
    const html = await renderOfflineReport({
      details: create(GetRunResponseSchema, { run }),
      events: [stepEvent(1, "</script><script>alert(1)</script>")],
    });
    expect(html).toContain('<script type="application/json" id="run-data">');
    expect(html.match(/<\/script>/g)).toHaveLength(2); // the data's and the page's, nothing from the completion
    const json = /<script type="application\/json" id="run-data">([\s\S]*?)<\/script>/.exec(html)![1]!;
    expect(JSON.parse(json).events[0].step.samples[0].completion).toBe("</script><script>alert(1)</script>");
    await expect(renderOfflineReport({ details: create(GetRunResponseSchema, {}), events: [] })).rejects.toThrow(
      /needs GetRunResponse.run/,
    );
  });
});
