// @lean-grpo/dashboard: the page that lists runs, streams a running run through WatchRun
// over Connect, compares runs and shows completions (src/browser/, bundled on first use);
// its server for `lean-grpo dashboard` and `train --ui`; and report.html, the same page
// rendered offline for one run.
export { pageAssets, type PageAssets } from "./page-bundle.js";
export { pageHtml } from "./page-html.js";
export { renderOfflineReport, type OfflineRun } from "./offline-report.js";
export { startDashboardServer, type DashboardServer, type DashboardServerOptions } from "./dashboard-server.js";
export { realRunFoldersOnly, type ReadOnlyOrchestrator } from "./real-run-folders.js";
