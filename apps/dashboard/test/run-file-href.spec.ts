// A link to a run's file is made of its names percent-encoded: a listed path keeps its
// shape, and no name, whatever it holds, turns the link into a script URL, another host, a
// query or a fragment, or climbs out of the run's folder.
import { describe, expect, it } from "vitest";
import { runFileHref } from "../src/browser/dom.js";

const PAGE = "http://127.0.0.1:8080/";
const REPORT = "file:///runs/r1/report.html";

describe("runFileHref", () => {
  it("keeps a listed checkpoint's path, offline and under /files/ live", () => {
    expect(runFileHref("", "checkpoints/step-0")).toBe("checkpoints/step-0/");
    expect(runFileHref("/files/r1/", "adapters/policy-v3")).toBe("/files/r1/adapters/policy-v3/");
  });

  it("never makes a scheme, another host, a query, a fragment or a way up", () => {
    for (const name of [
      "javascript:alert(1)",
      "JaVaScRiPt:alert(1)//x",
      "data:text/html,<script>alert(1)</script>",
      "//exfil.invalid/x",
      "/etc/passwd",
      "../../secret",
      "a?b#c",
      "\\\\exfil.invalid\\x",
      "\u0000javascript:alert(1)",
      "",
    ]) {
      for (const [base, page, inside] of [
        ["", REPORT, "file:///runs/r1/"],
        ["/files/r1/", PAGE, `${PAGE}files/r1/`],
      ] as const) {
        const url = new URL(runFileHref(base, name), page);
        expect(url.protocol, name).toBe(new URL(page).protocol);
        expect(url.host, name).toBe(new URL(page).host);
        expect(url.search + url.hash, name).toBe("");
        expect(url.href.startsWith(inside), `${name} -> ${url.href}`).toBe(true);
      }
    }
  });
});
