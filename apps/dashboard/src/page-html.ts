// The one HTML document of the dashboard, live or offline: the bundled script and styles
// inline (nothing is fetched but the orchestrator's RPCs), and for a report the run's data
// as JSON in <script type="application/json">.
import type { PageAssets } from "./page-bundle.js";

export function pageHtml(assets: PageAssets, options: { title: string; data?: unknown }): string {
  const data =
    options.data === undefined
      ? ""
      : `<script type="application/json" id="run-data">${scriptSafe(JSON.stringify(options.data))}</script>\n`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
<style>${styleSafe(assets.css)}</style>
</head><body>
<div id="app"></div>
${data}<script>${scriptSafe(assets.js)}</script>
</body></html>
`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** Inside <script>, only "</script" (and "<!--") can end it early: escape every "<" as JS and JSON both read \\u003c. */
function scriptSafe(code: string): string {
  return code.replace(/<(?=\/script|!--)/gi, "\\u003c");
}

function styleSafe(css: string): string {
  return css.replace(/<\/style/gi, "<\\/style");
}
