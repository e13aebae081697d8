// The dashboard's own auth: the page loads without a token (it holds no data), a token is
// traded for an HttpOnly SameSite=Strict session cookie named after the port, the relay and
// /files answer that cookie or a token and nothing else, and the server itself refuses to
// bind beyond loopback without auth.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { RunSchema, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { afterEach, describe, expect, it } from "vitest";
import { startDashboardServer, type DashboardServer } from "../src/index.js";

const run = create(RunSchema, { id: "r1", state: RunState.COMPLETED, algorithm: "grpo" });
const orchestrator = { listRuns: () => ({ runs: [run] }) };
const listRuns = (url: string, headers: Record<string, string> = {}) =>
  fetch(`${url}leangrpo.v1.OrchestratorService/ListRuns`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: "{}",
  });

describe("the dashboard with auth on", () => {
  let server: DashboardServer | undefined;
  afterEach(async () => server?.close());

  it("serves the page without a token, and nothing else", async () => {
    server = await startDashboardServer({
      orchestrator,
      port: 0,
      auth: { accept: ["mesh-token"] },
      runsDir: mkdtempSync(path.join(tmpdir(), "dash-")),
    });
    expect(server.authOn).toBe(true);
    expect((await fetch(server.url)).status).toBe(200);
    const refused = await listRuns(server.url);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: "unauthenticated" });
    expect((await fetch(`${server.url}files/r1/checkpoints/step-1/`)).status).toBe(401);
  });

  it("trades the link's token or the mesh's for a session cookie that opens the relay", async () => {
    server = await startDashboardServer({ orchestrator, port: 0, auth: { accept: ["mesh-token"] } });
    const port = new URL(server.url).port;
    const pageToken = new URL(server.pageUrl).hash.replace(/^#token=/, "");
    expect(pageToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const token of [pageToken, "mesh-token"]) {
      const session = await fetch(`${server.url}session`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
      expect(session.status).toBe(204);
      const cookie = session.headers.get("set-cookie")!;
      expect(cookie).toMatch(new RegExp(`^lean-grpo-dashboard-${port}=[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Strict$`));
      expect(cookie).not.toContain(token); // the cookie is a session, not the token
      const answer = await listRuns(server.url, { cookie: cookie.split(";")[0]! });
      expect(answer.status).toBe(200);
      expect((await answer.json()).runs[0].id).toBe("r1");
    }
    for (const bad of ["", "Bearer", "Bearer wrong", `Bearer ${pageToken}x`, "mesh-token"]) {
      const session = await fetch(`${server.url}session`, { method: "POST", headers: bad ? { authorization: bad } : {} });
      expect(session.status, bad).toBe(401);
      expect(session.headers.get("set-cookie")).toBeNull();
    }
    expect((await listRuns(server.url, { cookie: `lean-grpo-dashboard-${port}=${pageToken}` })).status).toBe(401);
    expect((await listRuns(server.url, { authorization: "Bearer mesh-token" })).status).toBe(200);
  });

  it("refuses to bind beyond loopback without auth, and binds there with it", async () => {
    await expect(startDashboardServer({ orchestrator, port: 0, host: "0.0.0.0" })).rejects.toThrow(
      "the dashboard does not bind 0.0.0.0, beyond loopback, without auth",
    );
    server = await startDashboardServer({ orchestrator, port: 0, host: "0.0.0.0", auth: { accept: [] } });
    expect(server.pageUrl).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/#token=/);
  });
});
