// The page's Content-Security-Policy as served and as written into report.html: the inline
// script and stylesheet admitted by the hashes of exactly what the document holds (hashed
// here from the document, not from what the code meant to embed), nothing inline or foreign
// besides, calls to the page's origin live and to nowhere offline, Trusted Types required;
// and no source of the page's script writes HTML from a string.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { GetRunResponseSchema, RunSchema, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { afterEach, describe, expect, it } from "vitest";
import { renderOfflineReport, startDashboardServer, type DashboardServer } from "../src/index.js";

const MARKUP = `</script><script>alert(1)</script><!--<img src=x onerror=alert(2)>"'&`;
const run = create(RunSchema, { id: "r1", state: RunState.COMPLETED, algorithm: MARKUP, error: MARKUP });

/** The directives of a policy, by name. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name!, values]),
  );
}

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
/** The text between the document's executable <script> tags and its <style> tags, as the browser hashes it. */
const inlineScript = (html: string) => /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
const inlineStyle = (html: string) => /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
const metaPolicy = (html: string) =>
  /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)![1]!.replaceAll("&#39;", "'");

function expectPagePolicy(policy: string, html: string, calls: "'self'" | "'none'"): void {
  const d = directives(policy);
  expect(d.get("default-src")).toEqual(["'none'"]);
  expect(d.get("script-src")).toEqual([sha256(inlineScript(html))]);
  expect(d.get("style-src")).toEqual([sha256(inlineStyle(html))]);
  expect(d.get("connect-src")).toEqual([calls]);
  expect(d.get("object-src")).toEqual(["'none'"]);
  expect(d.get("base-uri")).toEqual(["'none'"]);
  expect(d.get("require-trusted-types-for")).toEqual(["'script'"]);
  expect(d.get("trusted-types")).toEqual(["'none'"]);
  expect(policy).not.toMatch(/unsafe-|\*|https?:|data:|blob:/);
}

describe("the page's Content-Security-Policy", () => {
  let server: DashboardServer | undefined;
  afterEach(async () => server?.close());

  it("live: sent as a header and a meta, admitting only the page's own script and styles, calls to its origin, never framed", async () => {
    server = await startDashboardServer({ orchestrator: { listRuns: () => ({ runs: [run] }) }, port: 0 });
    const page = await fetch(server.url);
    const html = await page.text();
    const header = page.headers.get("content-security-policy")!;
    expectPagePolicy(header, html, "'self'");
    expect(directives(header).get("frame-ancestors")).toEqual(["'none'"]);
    expectPagePolicy(metaPolicy(html), html, "'self'");
    // The meta comes before the styles and the script it governs.
    expect(html.indexOf("Content-Security-Policy")).toBeLessThan(html.indexOf("<style>"));
  });

  it("report.html: a meta policy hashing its inlined script, no calls at all, and data that cannot end its block", async () => {
    const html = await renderOfflineReport({ details: create(GetRunResponseSchema, { run }), events: [] });
    expectPagePolicy(metaPolicy(html), html, "'none'");
    expect(html.indexOf("Content-Security-Policy")).toBeLessThan(html.indexOf("<style>"));
    const block = /<script type="application\/json" id="run-data">([\s\S]*?)<\/script>/.exec(html)![1]!;
    expect(block).not.toContain("<");
    expect(JSON.parse(block).details.run.algorithm).toBe(MARKUP);
    // The title is data too: escaped.
    expect(/<title>([^<]*)<\/title>/.exec(html)![1]).toBe(
      "lean-grpo run r1 (&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--&lt;img src=x onerror=alert(2)&gt;&quot;&#39;&amp;)",
    );
  });

  it("no source of the page's script writes HTML from a string", () => {
    const dir = fileURLToPath(new URL("../src/browser/", import.meta.url));
    const sources = readdirSync(dir).filter((f) => f.endsWith(".ts"));
    expect(sources.length).toBeGreaterThan(5);
    for (const file of sources) {
      const code = readFileSync(`${dir}${file}`, "utf8").replace(/^\s*\/\/.*$/gm, "");
      expect(code, file).not.toMatch(/\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\.srcdoc|new Function|\beval\(/);
    }
  });
});
