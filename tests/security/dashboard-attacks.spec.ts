// The dashboard is a client of the mesh like any other: attacked as a page on another site,
// a DNS-rebinding page, a caller without the token and a tenant who can plant symlinks in
// the runs directory would, each attack fails; with the token, everything the page needs
// answers. Against a real orchestrator that requires the mesh token (the relay, `--url`) and
// against runs read from disk (`--runs-dir`).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { OrchestratorService, RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { dashboardCommand } from "@lean-grpo/cli";
import { AUTH_TOKEN_ENV, loadConfig, serve, type RunningServer } from "@lean-grpo/kit";
import { createOrchestratorService, OrchestratorConfigSchema, RunOutputs } from "@lean-grpo/orchestrator";

const MESH_TOKEN = "mesh-T0KEN-for-the-dashboard-7d2e";
const SECRET = "SECRET-dashboard-9b41";
const ORCHESTRATOR = `/${OrchestratorService.typeName}`;

let dir: string;
let runsDir: string;
let orchestrator: RunningServer;

/** A finished run on disk as the orchestrator leaves one, with one step and a checkpoint of step 2. */
async function writeRun(id: string, where = runsDir): Promise<string> {
  const outputs = RunOutputs.for(where, id);
  await outputs.create({ run: {}, dataset: "d.jsonl" });
  await outputs.writeRun({
    ...{ id, state: RunState[RunState.COMPLETED], algorithm: "grpo", step: 2, total_steps: 2, dataset: "d.jsonl" },
    ...{ created_at: "2020-01-01T00:00:00Z", updated_at: "2020-01-01T00:01:00Z", error: "", last_checkpoint_step: 2 },
    last_metrics: { reward_mean: 0.5 },
  });
  await outputs.appendStep({ step: 1, time: "2020-01-01T00:00:30Z", adapter_version: 1, metrics: { reward_mean: 0.5 }, timings: {} });
  return outputs.dir;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "dashboard-attacks-"));
  runsDir = path.join(dir, "runs");
  const outside = path.join(dir, "outside");
  mkdirSync(path.join(outside, "step-1"), { recursive: true });
  writeFileSync(path.join(outside, "passwd"), `${SECRET}\n`);
  writeFileSync(path.join(outside, "step-1", "trainer_state.json"), `${SECRET}\n`);

  // r1: a real checkpoint, a symlink planted inside it, and step folders that are symlinks out.
  const r1 = await writeRun("r1");
  const step2 = path.join(r1, "checkpoints", "step-2");
  mkdirSync(path.join(step2, "adapter"), { recursive: true });
  writeFileSync(path.join(step2, "trainer_state.json"), '{"step":2}\n');
  writeFileSync(path.join(step2, "adapter", "adapter_config.json"), '{"r":2}\n');
  symlinkSync(path.join(outside, "passwd"), path.join(step2, "planted.json"));
  symlinkSync(outside, path.join(step2, "planted-dir"));
  symlinkSync(outside, path.join(r1, "checkpoints", "step-9"));
  symlinkSync("/etc", path.join(r1, "checkpoints", "step-8"));
  // r2: its checkpoints/ folder is a symlink out. The run store does not list a checkpoint
  // through it, so GetRun names none and the dashboard has nothing there to serve.
  await writeRun("r2");
  symlinkSync(outside, path.join(runsDir, "r2", "checkpoints"));
  // linked: a whole run folder that is a symlink out of runs_dir.
  const elsewhere = await writeRun("linked", path.join(dir, "elsewhere"));
  mkdirSync(path.join(elsewhere, "checkpoints", "step-1"), { recursive: true });
  writeFileSync(path.join(elsewhere, "checkpoints", "step-1", "trainer_state.json"), `${SECRET}\n`);
  symlinkSync(elsewhere, path.join(runsDir, "linked"));

  const config = loadConfig(OrchestratorConfigSchema, {
    flags: { runs_dir: runsDir, server: { port: 0, auth: { token: MESH_TOKEN }, shutdown: { drain_delay_ms: 0 } } },
  });
  orchestrator = await serve({ name: "orchestrator", services: [createOrchestratorService(config)], config: config.server });
});

afterAll(async () => {
  await orchestrator?.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  vi.unstubAllEnvs();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Raw HTTP/1.1, so that Host, Origin and Sec-Fetch-Site say what an attacker's browser would send. */
function send(
  url: string,
  target: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: hostname,
        port: Number(port),
        path: target,
        method: options.method ?? "GET",
        headers: { host: `${hostname}:${port}`, ...options.headers },
        timeout: 10_000,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

const connectCall = (method: string, body: object, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", "connect-protocol-version": "1", ...headers },
  body: JSON.stringify(body),
  target: `${ORCHESTRATOR}/${method}`,
});

async function codeOf(call: Promise<unknown>): Promise<Code | "ok"> {
  return call.then(
    () => "ok" as const,
    (e: unknown) => ConnectError.from(e).code,
  );
}

/** Every page call over a transport: ListRuns, GetRun, and a WatchRun read to its end. */
async function pageCalls(transport: Parameters<typeof createClient>[1]) {
  const client = createClient(OrchestratorService, transport);
  const events: unknown[] = [];
  return {
    list: await codeOf(client.listRuns({})),
    get: await codeOf(client.getRun({ runId: "r1" })),
    watch: await codeOf(
      (async () => {
        for await (const event of client.watchRun({ runId: "r1", fromStart: true })) events.push(event);
      })(),
    ),
    events,
  };
}

/** The session cookie, as the page gets it for the token in its link. */
async function sessionCookie(pageUrl: string): Promise<string> {
  const { origin } = new URL(pageUrl);
  const token = decodeURIComponent(new URL(pageUrl).hash.replace(/^#token=/, ""));
  const answer = await send(pageUrl, "/session", { method: "POST", headers: { authorization: `Bearer ${token}`, origin } });
  expect(answer.status).toBe(204);
  const cookie = String(answer.headers["set-cookie"]).split(";")[0]!;
  expect(String(answer.headers["set-cookie"])).toMatch(/; HttpOnly; SameSite=Strict$/);
  return cookie;
}

const withHeader =
  (name: string, value: string): Interceptor =>
  (next) =>
  (req) => {
    req.header.set(name, value);
    return next(req);
  };

describe("the dashboard relaying to an orchestrator that requires the mesh token", () => {
  it("answers nothing of ListRuns, GetRun or WatchRun without a token, over Connect and gRPC-Web", async () => {
    vi.stubEnv(AUTH_TOKEN_ENV, MESH_TOKEN); // the relay has the token: only the browser's side is missing
    const ui = await dashboardCommand({ url: orchestrator.url, port: "0", host: "127.0.0.1", runsDir });
    try {
      const baseUrl = ui.url.replace(/\/$/, "");
      for (const transport of [
        createConnectTransport({ baseUrl, httpVersion: "1.1" }),
        createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
        createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [withHeader("authorization", "Bearer not-the-token")] }),
        createConnectTransport({
          baseUrl,
          httpVersion: "1.1",
          interceptors: [withHeader("cookie", `lean-grpo-dashboard-${new URL(ui.url).port}=forged`)],
        }),
      ]) {
        const calls = await pageCalls(transport);
        expect([calls.list, calls.get, calls.watch]).toEqual([Code.Unauthenticated, Code.Unauthenticated, Code.Unauthenticated]);
        expect(calls.events).toEqual([]);
      }
      const refused = await send(ui.url, connectCall("ListRuns", {}).target, connectCall("ListRuns", {}));
      expect(refused.status).toBe(401);
      expect(refused.body).not.toContain("r1");
      expect(refused.body).not.toContain(MESH_TOKEN);
      expect(refused.body).not.toContain(new URL(ui.pageUrl).hash.slice(7));
    } finally {
      await ui.close();
    }
  });

  it("with its token (the link's, traded for the session cookie, or the mesh's) answers every call the page makes", async () => {
    vi.stubEnv(AUTH_TOKEN_ENV, MESH_TOKEN);
    const ui = await dashboardCommand({ url: orchestrator.url, port: "0", host: "127.0.0.1", runsDir });
    try {
      expect(ui.pageUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]{43}$/);
      expect(ui.pageUrl).not.toContain(MESH_TOKEN);
      const baseUrl = ui.url.replace(/\/$/, "");
      const cookie = await sessionCookie(ui.pageUrl);
      for (const header of [withHeader("cookie", cookie), withHeader("authorization", `Bearer ${MESH_TOKEN}`)]) {
        const calls = await pageCalls(createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [header] }));
        expect([calls.list, calls.get, calls.watch]).toEqual(["ok", "ok", "ok"]);
        expect(calls.events.length).toBeGreaterThan(0);
      }
      const client = createClient(
        OrchestratorService,
        createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [withHeader("cookie", cookie)] }),
      );
      expect((await client.listRuns({})).runs.map((r) => r.id).sort()).toContain("r1");
      expect((await client.getRun({ runId: "r1" })).checkpoints).toContain("checkpoints/step-2");
      // The page itself (a script with no data) loads without one, and says nothing of the runs.
      const page = await send(ui.url, "/");
      expect(page.status).toBe(200);
      expect(page.body).not.toContain("r1");
      // Never framed, and only its own inlined script runs (tests/security/dashboard-stored-markup.spec.ts attacks that).
      const policy = String(page.headers["content-security-policy"]);
      expect(policy).toContain("frame-ancestors 'none'");
      expect(policy).toMatch(/(^|; )script-src 'sha256-[A-Za-z0-9+/]{43}='(;|$)/);
    } finally {
      await ui.close();
    }
  });

  it("refuses a Host it does not serve (DNS rebinding), whatever the path, token or not", async () => {
    vi.stubEnv(AUTH_TOKEN_ENV, MESH_TOKEN);
    const ui = await dashboardCommand({ url: orchestrator.url, port: "0", host: "127.0.0.1", runsDir });
    try {
      const cookie = await sessionCookie(ui.pageUrl);
      const list = connectCall("ListRuns", {}, { cookie, authorization: `Bearer ${MESH_TOKEN}` });
      for (const host of ["attacker.example", `attacker.example:${new URL(ui.url).port}`, "127.0.0.1.attacker.example", "localhost.evil"]) {
        for (const [target, options] of [
          ["/", {}],
          [list.target, list],
          ["/files/r1/checkpoints/step-2/trainer_state.json", { headers: { cookie } }],
          ["/session", { method: "POST", headers: { authorization: `Bearer ${MESH_TOKEN}` } }],
        ] as const) {
          const answer = await send(ui.url, target, { ...options, headers: { ...("headers" in options ? options.headers : {}), host } });
          expect(answer.status, `${host} ${target}`).toBe(421);
          expect(answer.body).not.toContain("r1");
          expect(answer.headers["set-cookie"]).toBeUndefined();
        }
      }
      // The names it serves: loopback's, by name or address.
      for (const host of [`localhost:${new URL(ui.url).port}`, `[::1]:${new URL(ui.url).port}`]) {
        expect((await send(ui.url, list.target, { ...list, headers: { ...list.headers, host } })).status, host).toBe(200);
      }
    } finally {
      await ui.close();
    }
  });

  it("refuses writes and the orchestrator's calls from another origin, even carrying the token", async () => {
    vi.stubEnv(AUTH_TOKEN_ENV, MESH_TOKEN);
    const ui = await dashboardCommand({ url: orchestrator.url, port: "0", host: "127.0.0.1", runsDir });
    try {
      const cookie = await sessionCookie(ui.pageUrl);
      const token = decodeURIComponent(new URL(ui.pageUrl).hash.slice(7));
      const { origin, port } = new URL(ui.url);
      const list = connectCall("ListRuns", {}, { cookie });
      const foreigners: Record<string, string>[] = [
        { origin: "http://attacker.example" },
        { origin: `http://localhost:${Number(port) + 1}` }, // same site, another origin
        { origin: "null" },
        { "sec-fetch-site": "cross-site" },
        { "sec-fetch-site": "same-site" },
      ];
      for (const foreign of foreigners) {
        const call = await send(ui.url, list.target, { ...list, headers: { ...list.headers, ...foreign } });
        expect(call.status, JSON.stringify(foreign)).toBe(403);
        expect(call.body).not.toContain("r1");
        const session = await send(ui.url, "/session", { method: "POST", headers: { authorization: `Bearer ${token}`, ...foreign } });
        expect(session.status, JSON.stringify(foreign)).toBe(403);
        expect(session.headers["set-cookie"]).toBeUndefined();
      }
      // The page's own origin is answered.
      expect(
        (await send(ui.url, list.target, { ...list, headers: { ...list.headers, origin, "sec-fetch-site": "same-origin" } })).status,
      ).toBe(200);
    } finally {
      await ui.close();
    }
  });

  it("serves a run's listed artefacts with the token, and nothing through a symlink", async () => {
    vi.stubEnv(AUTH_TOKEN_ENV, MESH_TOKEN);
    const ui = await dashboardCommand({ url: orchestrator.url, port: "0", host: "127.0.0.1", runsDir });
    try {
      const cookie = await sessionCookie(ui.pageUrl);
      const get = (target: string, headers: Record<string, string> = { cookie }) => send(ui.url, target, { headers });
      // What the page links to: the checkpoint's listing and its files.
      const listing = await get("/files/r1/checkpoints/step-2/");
      expect(listing.status).toBe(200);
      expect(listing.body).toContain('href="trainer_state.json"');
      expect(listing.body).toContain('href="adapter/"');
      expect(listing.body).not.toContain("planted"); // a symlink is not listed
      expect((await get("/files/r1/checkpoints/step-2/trainer_state.json")).body).toBe('{"step":2}\n');
      expect((await get("/files/r1/checkpoints/step-2/adapter/adapter_config.json")).body).toBe('{"r":2}\n');
      // Without the token: nothing.
      expect((await get("/files/r1/checkpoints/step-2/trainer_state.json", {})).status).toBe(401);
      // Symlinks planted in the runs directory: a file in a checkpoint, step folders, a run's checkpoints/ folder.
      for (const [target, status] of [
        ["/files/r1/checkpoints/step-2/planted.json", 403],
        ["/files/r1/checkpoints/step-2/planted-dir/passwd", 403],
        ["/files/r1/checkpoints/step-2/planted-dir/", 403],
        ["/files/r1/checkpoints/step-9/passwd", 404],
        ["/files/r1/checkpoints/step-9/", 404],
        ["/files/r1/checkpoints/step-8/passwd", 404],
        ["/files/r2/checkpoints/step-1/trainer_state.json", 404],
        ["/files/r2/checkpoints/step-1/", 404],
        // And anything the page does not link to.
        ["/files/r1/run.json", 404],
        ["/files/r1/config.json", 404],
        ["/files/r1/checkpoints/step-3/", 404],
        ["/files/r1/checkpoints/step-2/../../run.json", 404],
        ["/files/r1/checkpoints/step-2/%2e%2e/%2e%2e/run.json", 404],
      ] as const) {
        const answer = await get(target);
        expect(answer.status, target).toBe(status);
        expect(answer.body, target).not.toContain(SECRET);
        expect(answer.body, target).not.toContain("root:");
      }
    } finally {
      await ui.close();
    }
  });

  it("tells the operator when the orchestrator refuses the relay's token, instead of passing on UNAUTHENTICATED", async () => {
    vi.stubEnv(AUTH_TOKEN_ENV, "");
    const ui = await dashboardCommand(
      { url: orchestrator.url, port: "0", host: "127.0.0.1", runsDir },
      { env: {}, tokenFile: path.join(dir, "none") },
    );
    try {
      const client = createClient(OrchestratorService, createConnectTransport({ baseUrl: ui.url.replace(/\/$/, ""), httpVersion: "1.1" }));
      const error = await client.listRuns({}).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(error?.code).toBe(Code.FailedPrecondition);
      expect(error?.rawMessage).toContain(`start the dashboard with ${AUTH_TOKEN_ENV} set to the mesh's token`);
    } finally {
      await ui.close();
    }
  });
});

describe("the dashboard on loopback with auth off", () => {
  it("still refuses a rebinding Host and another origin's calls, which would otherwise read every run", async () => {
    vi.stubEnv(AUTH_TOKEN_ENV, "");
    const ui = await dashboardCommand({ runsDir, port: "0", host: "127.0.0.1" }, { env: {}, tokenFile: path.join(dir, "none") });
    try {
      const list = connectCall("ListRuns", {});
      expect((await send(ui.url, list.target, { ...list, headers: { ...list.headers, host: "attacker.example" } })).status).toBe(421);
      expect((await send(ui.url, list.target, { ...list, headers: { ...list.headers, origin: "http://attacker.example" } })).status).toBe(
        403,
      );
      const own = await send(ui.url, list.target, { ...list, headers: { ...list.headers, origin: new URL(ui.url).origin } });
      expect(own.status).toBe(200);
      expect(own.body).toContain("r1");
      expect(ui.authOn).toBe(false);
    } finally {
      await ui.close();
    }
  });
});

describe("the dashboard reading runs from disk (--runs-dir)", () => {
  it("does not list, read or serve a run folder that is a symlink", async () => {
    vi.stubEnv(AUTH_TOKEN_ENV, MESH_TOKEN);
    const ui = await dashboardCommand({ runsDir, port: "0", host: "127.0.0.1" });
    try {
      const cookie = await sessionCookie(ui.pageUrl);
      const client = createClient(
        OrchestratorService,
        createConnectTransport({ baseUrl: ui.url.replace(/\/$/, ""), httpVersion: "1.1", interceptors: [withHeader("cookie", cookie)] }),
      );
      const listed = (await client.listRuns({})).runs.map((r) => r.id);
      expect(listed).toContain("r1");
      expect(listed).not.toContain("linked");
      expect(await codeOf(client.getRun({ runId: "linked" }))).toBe(Code.NotFound);
      expect(
        await codeOf(
          (async () => {
            for await (const _ of client.watchRun({ runId: "linked", fromStart: true })) {
              /* nothing may arrive */
            }
          })(),
        ),
      ).toBe(Code.NotFound);
      for (const [target, status] of [
        ["/files/linked/checkpoints/step-1/trainer_state.json", 404],
        ["/files/r1/checkpoints/step-9/passwd", 404],
        ["/files/r1/checkpoints/step-2/planted.json", 403],
        ["/files/r1/checkpoints/step-2/planted-dir/passwd", 403],
      ] as const) {
        const answer = await send(ui.url, target, { headers: { cookie } });
        expect(answer.status, target).toBe(status);
        expect(answer.body, target).not.toContain(SECRET);
      }
      expect((await send(ui.url, "/files/r1/checkpoints/step-2/trainer_state.json", { headers: { cookie } })).body).toBe('{"step":2}\n');
    } finally {
      await ui.close();
    }
  });
});

describe("binding beyond loopback", () => {
  it("is refused without a token, naming the variable to set; with one, the page needs it", async () => {
    vi.stubEnv(AUTH_TOKEN_ENV, "");
    const none = { env: {}, tokenFile: path.join(dir, "none") };
    for (const host of ["0.0.0.0", "::"]) {
      await expect(dashboardCommand({ runsDir, port: "0", host }, none)).rejects.toThrow(
        new RegExp(`^--host ${host} is beyond loopback, and the dashboard binds there only with a token to require: set ${AUTH_TOKEN_ENV}`),
      );
    }
    vi.stubEnv(AUTH_TOKEN_ENV, MESH_TOKEN);
    const ui = await dashboardCommand({ runsDir, port: "0", host: "0.0.0.0" });
    try {
      expect(ui.authOn).toBe(true);
      const list = connectCall("ListRuns", {});
      expect(
        (await send(ui.url, list.target, { ...list, headers: { ...list.headers, host: `127.0.0.1:${new URL(ui.url).port}` } })).status,
      ).toBe(401);
    } finally {
      await ui.close();
    }
  });
});
