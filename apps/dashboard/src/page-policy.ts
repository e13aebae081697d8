// The page's Content-Security-Policy: the one script and the one stylesheet the page inlines,
// by their SHA-256 hashes, and nothing else. Markup that got into the page from a run's data
// could then neither run (no inline handler, <script>, javascript: URL, eval or other script
// is allowed; Trusted Types make the browser refuse HTML strings in innerHTML and the like)
// nor fetch (no image, frame, font, object or style from anywhere, and calls only to the
// page's own origin, none at all from report.html). Hashes rather than 'self' for the live
// page too: 'self' would also admit any script-typed answer of the dashboard's origin, and
// the same document is served live and written offline.
//
// Styles are hashed as well, not 'unsafe-inline': the page's styles are one <style> block,
// and what it and uPlot change at run time they set through the CSSOM (element.style), which
// CSP does not restrict; an injected style="…" or <style> from data is refused.
import { createHash } from "node:crypto";

export interface PagePolicyOptions {
  /** The exact text of the page's inline <script>, as it stands between its tags. */
  script: string;
  /** The exact text of the page's inline <style>. */
  style: string;
  /** Live: OrchestratorService over Connect on the page's own origin. Offline (report.html): no calls at all. */
  calls: "self" | "none";
}

/** The policy as a <meta http-equiv> carries it (frame-ancestors is ignored there: the live page's header adds it). */
export function pagePolicy(options: PagePolicyOptions): string {
  return [
    "default-src 'none'",
    `script-src ${hashSource(options.script)}`,
    `style-src ${hashSource(options.style)}`,
    `connect-src '${options.calls}'`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
  ].join("; ");
}

/** The CSP source that admits exactly this inline text. */
export function hashSource(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}
