// The one HTML document of the dashboard, live or offline: the bundled script and styles
// inline (nothing is fetched but the orchestrator's RPCs), and for a report the run's data
// as JSON in <script type="application/json">. Its Content-Security-Policy (page-policy.ts)
// rides in a <meta> before anything else, so report.html opened from disk keeps it; the live
// server also sends it as a header.
import type { PageAssets } from "./page-bundle.js";
import { pagePolicy } from "./page-policy.js";

export interface PageDocument {
  html: string;
  /** The policy the document carries, for a server to send as its header too. */
  policy: string;
}

/** With `data`, an offline page (report.html) that calls nothing; without, the live page that calls its own origin. */
export function pageHtml(assets: PageAssets, options: { title: string; data?: unknown }): PageDocument {
  const script = scriptSafe(assets.js);
  const style = styleSafe(assets.css);
  const policy = pagePolicy({ script, style, calls: options.data === undefined ? "self" : "none" });
  const data = options.data === undefined ? "" : `<script type="application/json" id="run-data">${jsonInHtml(options.data)}</script>\n`;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(policy)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
<style>${style}</style>
</head><body>
<div id="app"></div>
${data}<script>${script}</script>
</body></html>
`;
  return { html, policy };
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/**
 * The run's data as JSON that no text in it can end early: every "<" written as \u003c,
 * which JSON reads back as "<", so no "</script" or "<!--" appears whatever a field holds.
 */
function jsonInHtml(data: unknown): string {
  return JSON.stringify(data).replace(/</g, "\\u003c");
}

/** Inside <script>, only "</script" (and "<!--") can end it early: escape every "<" as JS and JSON both read \\u003c. */
function scriptSafe(code: string): string {
  return code.replace(/<(?=\/script|!--)/gi, "\\u003c");
}

function styleSafe(css: string): string {
  return css.replace(/<\/style/gi, "<\\/style");
}
