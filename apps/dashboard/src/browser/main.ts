// Entry of the page's bundle: an offline report carries its run as JSON in
// <script id="run-data">; otherwise the page calls the orchestrator that served it.
import "uplot/dist/uPlot.min.css";
import "./dashboard.css";
import { DashboardApp } from "./dashboard-app.js";
import { connectSource, embeddedSource, type EmbeddedRun, type RunSource } from "./run-source.js";

const embedded = document.getElementById("run-data");
const source: RunSource = embedded?.textContent
  ? embeddedSource(JSON.parse(embedded.textContent) as EmbeddedRun)
  : connectSource(new URL(".", location.href).href.replace(/\/$/, ""));
void new DashboardApp(source, document.getElementById("app")!).start();
