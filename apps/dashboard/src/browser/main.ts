// Entry of the page's bundle: an offline report carries its run as JSON in
// <script id="run-data">; otherwise the page calls the orchestrator that served it, after
// trading the token of the link it was opened by for its session (page-session.ts).
import "uplot/dist/uPlot.min.css";
import "./dashboard.css";
import { DashboardApp } from "./dashboard-app.js";
import { tradeFragmentToken } from "./page-session.js";
import { connectSource, embeddedSource, type EmbeddedRun } from "./run-source.js";

async function main(): Promise<void> {
  const root = document.getElementById("app")!;
  const embedded = document.getElementById("run-data");
  if (embedded?.textContent) {
    await new DashboardApp(embeddedSource(JSON.parse(embedded.textContent) as EmbeddedRun), root).start();
    return;
  }
  const refused = await tradeFragmentToken().catch((error: unknown) => `could not open a session: ${String(error)}`);
  const app = new DashboardApp(connectSource(new URL(".", location.href).href.replace(/\/$/, "")), root);
  if (refused) app.showProblem(refused);
  await app.start();
}

void main();
