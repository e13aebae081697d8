// Which requests reach the dashboard's routes at all: the Host names it serves (loopback's,
// the bound host's, --allow-host's; the machine's own when bound to every interface), and no
// Origin but its own where state could change.
import type { IncomingMessage } from "node:http";
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { checkHost, checkOrigin, servedHostnames } from "../src/request-guard.js";

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe("checkHost", () => {
  it("answers loopback names and addresses, the bound host and the allowed names, with or without a port", () => {
    const served = servedHostnames("10.1.2.3", ["dash.example.org", "::2"]);
    for (const host of [
      "localhost",
      "localhost:8080",
      "127.0.0.1:8080",
      "127.9.9.9",
      "[::1]:80",
      "10.1.2.3:8080",
      "DASH.example.org",
      "[::2]:1",
    ])
      expect(checkHost(request({ host }), served), host).toBeUndefined();
  });

  it("refuses any other name, a missing Host and one the URL parser refuses, saying how to allow a name", () => {
    const served = servedHostnames("127.0.0.1");
    for (const host of ["attacker.example", "localhost.attacker.example", "127.0.0.1.nip.io", "10.1.2.3", "a b", "[::1"]) {
      const refusal = checkHost(request({ host }), served);
      expect(refusal?.status, host).toBe(421);
      expect(refusal?.message).toContain("--allow-host NAME");
    }
    expect(checkHost(request({}), served)?.status).toBe(400);
  });

  it("serves the machine's own name when bound to every interface, and not otherwise", () => {
    expect(servedHostnames("0.0.0.0").has(hostname().toLowerCase())).toBe(true);
    expect(servedHostnames("::").has("[::]")).toBe(true);
    expect(servedHostnames("127.0.0.1").has(hostname().toLowerCase())).toBe(hostname().toLowerCase() === "localhost");
  });
});

describe("checkOrigin", () => {
  it("lets the page's own origin and a client with no Origin through", () => {
    expect(checkOrigin(request({ host: "127.0.0.1:8080", origin: "http://127.0.0.1:8080" }))).toBeUndefined();
    expect(checkOrigin(request({ host: "localhost:80", origin: "http://localhost" }))).toBeUndefined();
    expect(checkOrigin(request({ host: "127.0.0.1:8080", "sec-fetch-site": "same-origin" }))).toBeUndefined();
    expect(checkOrigin(request({ host: "127.0.0.1:8080" }))).toBeUndefined();
  });

  it("refuses another origin, another port of the same host, null, and a cross-site or same-site fetch", () => {
    const foreign: Record<string, string>[] = [
      { origin: "http://attacker.example" },
      { origin: "http://127.0.0.1:8081" },
      { origin: "https://127.0.0.1:8080.attacker.example" },
      { origin: "null" },
      { origin: "file://" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
    ];
    for (const headers of foreign)
      expect(checkOrigin(request({ host: "127.0.0.1:8080", ...headers }))?.status, JSON.stringify(headers)).toBe(403);
  });
});
