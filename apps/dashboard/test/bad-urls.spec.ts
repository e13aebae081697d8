// Request targets a browser would never send, sent as an attacker would (raw HTTP/1.1
// over a socket): each is answered 400 and the dashboard keeps serving.
import { mkdtempSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startDashboardServer, type DashboardServer } from "../src/index.js";

function rawGet(url: string, target: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`);
    });
    // A server that died (or hangs) answers nothing: fail in seconds, not at the test timeout.
    socket.setTimeout(5_000, () => socket.destroy());
    let received = "";
    socket.on("data", (chunk) => (received += chunk));
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
  });
}

const statusOf = (response: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1]);

describe("dashboard server, malformed request targets", () => {
  let server: DashboardServer | undefined;
  afterEach(async () => server?.close());

  it.each([
    ["a truncated %-escape under /files/", "/files/r1/checkpoints/%E0%A4%A"],
    ["a lone %", "/files/%"],
    ["%-escapes that are not UTF-8", "/files/r1/adapters/%FF%FE"],
    ["an absolute URL the parser refuses", "http://[/x"],
    ["a port out of range", "http://dashboard:99999/"],
  ])("answers 400 to %s and keeps serving", async (_what, target) => {
    const runsDir = mkdtempSync(path.join(tmpdir(), "dashboard-bad-urls-"));
    server = await startDashboardServer({ orchestrator: {}, port: 0, runsDir });
    const response = await rawGet(server.url, target);
    expect(statusOf(response)).toBe(400);
    expect((await fetch(server.url)).status).toBe(200);
  });
});
