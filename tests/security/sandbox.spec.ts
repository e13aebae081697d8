// The sandbox of the REPL workers and the replay checker, attacked from inside. A REPL
// stand-in speaking the real protocol (sandbox-repl.mjs) runs as the verifier's worker
// under `repl.sandbox.mode: bwrap` and tries what a proof's code would: read the
// verifier's environment (/proc/<verifier>/environ, where its tokens are), another
// worker's private directory and a replay's check directory, see the verifier's
// process, write outside its own directory, reach the verifier's port. A checker
// stand-in (sandbox-checker.mjs) tries the same from a replay check. Each report comes
// back through the channel a proof has (a Lean message, the checker's exception).
// Where bubblewrap cannot run (no unprivileged user namespaces), the tests skip and
// say why; the service then refuses to start in mode bwrap (tested in
// services/verifier/src/repl/sandbox.spec.ts).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { prepareSandbox, SandboxUnavailable, type SandboxConfig } from "../../services/verifier/src/repl/sandbox.js";
import { makeCheckDirectory } from "../../services/verifier/src/replay/check-directory.js";
import { ReplayChecker } from "../../services/verifier/src/replay/replay-checker.js";
import { theoremTarget } from "../../services/verifier/src/verdict/theorem-target.js";
import { startVerifier, type Harness } from "../../services/verifier/test/support/verifier-harness.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const SECRET = `verifier-secret-${process.pid}`;
const sandboxConfig: SandboxConfig = { mode: "bwrap", network: "isolate", read_only: [], writable: [], limits: { file_size_mb: 64 } };

/** Why bubblewrap cannot run here, or undefined when it can. */
function bwrapUnavailable(): string | undefined {
  try {
    prepareSandbox(sandboxConfig, { warn: () => {} });
    return undefined;
  } catch (error) {
    if (error instanceof SandboxUnavailable) return error.message;
    throw error;
  }
}

const unavailable = bwrapUnavailable();
if (unavailable) console.warn(`tests/security/sandbox.spec.ts skipped: ${unavailable}`);

interface Report {
  uid: number;
  pid: number;
  ppid: number;
  tmpdir: string;
  marker: string;
  envNames: string[];
  selfEnviron: string;
  pids: string[];
  reads: Record<string, string>;
  writes: { own: string; tmp: string; cwd: string };
  network: string;
}

describe.skipIf(unavailable !== undefined)("the REPL sandbox (bubblewrap), attacked by the REPL stand-in", () => {
  let harness: Harness;
  let replayDir: { path: string; remove(): Promise<void> };
  const environ = `/proc/${process.pid}/environ`;
  let first: Report;
  let second: Report;

  /** Verify on a theorem whose statement quotes `paths`: the stand-in probes them and reports in the proof's one message. */
  async function attack(paths: string[]): Promise<Report> {
    const statement = `theorem t : [${paths.map((path) => `"${path}"`).join(", ")}].length = ${paths.length}`;
    const response = await harness.client.verify({ theorem: { name: "t", statement, header: "import Mathlib" }, proof: "by rfl" });
    expect(response.verdict, response.reason).toBe(Verdict.ERROR);
    return JSON.parse(response.messages[0]!.data) as Report;
  }

  beforeAll(async () => {
    // The verifier's own environment holds a secret, as a deployment's holds its tokens.
    process.env.LEANGRPO_SERVER__AUTH__TOKEN = SECRET;
    // A replay's check directory, made as the replay tier makes it.
    replayDir = makeCheckDirectory(tmpdir(), undefined, {
      challenge: "theorem t : True := sorry",
      solution: "theorem t : True := trivial",
      config: { challenge_module: "Challenge", solution_module: "Solution", theorem_names: ["t"], permitted_axioms: [] },
    });
    harness = await startVerifier({ server: { port: 0 } });
    const port = Number(new URL(harness.server.url).port);
    await harness.close();
    harness = await startVerifier({
      server: { port },
      repl: {
        command: [process.execPath, join(here, "sandbox-repl.mjs"), "--port", String(port)],
        pool_size: 2,
        // Both workers hold the header, so the second call goes to the other (least recently used) worker.
        warm_headers: ["import Mathlib"],
        sandbox: sandboxConfig,
      },
    });
    first = await attack([environ, "/proc/1/environ", replayDir.path, join(replayDir.path, "comparator.json")]);
    // Until the other worker serves it (the second may still be warming its header at first).
    for (let attempt = 0; attempt < 20; attempt++) {
      second = await attack([first.tmpdir, first.marker]);
      if (second.tmpdir !== first.tmpdir) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }, 60_000);

  afterAll(async () => {
    delete process.env.LEANGRPO_SERVER__AUTH__TOKEN;
    await harness?.close();
    await replayDir?.remove();
  });

  it("runs as an unprivileged user in its own PID namespace: neither its parent nor the verifier is there", async () => {
    // The worker's process as the host sees it: the REPL's parent (bubblewrap), spawned by the verifier.
    const hostPids = (await harness.client.poolStats({})).workerStats.map((worker) => String(worker.pid));
    expect(hostPids.every((pid) => pid !== "0")).toBe(true);
    for (const report of [first, second]) {
      for (const pid of hostPids) expect(report.pids).not.toContain(pid);
      expect(hostPids).not.toContain(String(report.ppid));
      expect(report.uid).toBe(65534);
      expect(report.pids).not.toContain(String(process.pid));
      expect(report.ppid).not.toBe(process.pid);
      // bubblewrap's init, and the worker's own processes: nothing of the host.
      expect(report.pids.every((pid) => Number(pid) < 16)).toBe(true);
    }
  });

  it("cannot read the verifier's environment, and its own holds no secret", () => {
    expect(first.reads[environ]).toMatch(/^error:/);
    expect(first.reads["/proc/1/environ"]).not.toContain(SECRET);
    expect(first.selfEnviron).not.toContain(SECRET);
    expect(first.envNames).not.toContain("LEANGRPO_SERVER__AUTH__TOKEN");
    expect(first.envNames).toEqual(expect.arrayContaining(["HOME", "PATH", "TMPDIR"]));
  });

  it("cannot see a replay's check directory", () => {
    expect(first.reads[replayDir.path]).toBe("error:ENOENT");
    expect(first.reads[join(replayDir.path, "comparator.json")]).toBe("error:ENOENT");
  });

  it("cannot see another worker's private directory", () => {
    expect(second.tmpdir).not.toBe(first.tmpdir);
    expect(second.reads[first.tmpdir]).toBe("error:ENOENT");
    expect(second.reads[first.marker]).toBe("error:ENOENT");
  });

  it("writes land in its private directory only", () => {
    for (const report of [first, second]) {
      expect(report.writes.own).toBe("written");
      expect(existsSync(report.marker)).toBe(true);
      // /tmp inside is the sandbox's own: what it wrote there is not in the host's /tmp.
      expect(existsSync(`/tmp/escape-${report.pid}`) && readFileSync(`/tmp/escape-${report.pid}`, "utf8").includes("written by")).toBe(
        false,
      );
      expect(report.writes.cwd).toBe("error:EROFS");
    }
  });

  it("has no network: the verifier's own port on loopback is unreachable", () => {
    expect(first.network).toMatch(/^error:/);
  });
});

describe.skipIf(unavailable !== undefined)("the replay checker's sandbox (bubblewrap), attacked by the checker stand-in", () => {
  it("cannot read the verifier's environment, a REPL worker's directory or another replay's directory; writes only its own", async () => {
    const worker = mkdtempSync(join(tmpdir(), "lean-grpo-repl-0-"));
    writeFileSync(join(worker, "state"), "a worker's file");
    const otherReplay = makeCheckDirectory(tmpdir(), undefined, { challenge: "", solution: "", config: {} as never });
    const probes = [`/proc/${process.pid}/environ`, join(worker, "state"), join(otherReplay.path, "comparator.json")];
    const checker = new ReplayChecker({
      argv: [process.execPath, join(here, "sandbox-checker.mjs")],
      workspace: undefined,
      env: { PROBE_PATHS: JSON.stringify(probes) },
      timeoutMs: 30_000,
      concurrency: 1,
      permittedAxioms: [],
      // The checker's script imports its neighbour: the directory is bound read-only, as an operator binds a tool's.
      sandbox: prepareSandbox({ ...sandboxConfig, read_only: [here] }, { warn: () => {} }),
      logger: { error: () => {}, warn: () => {}, info: () => {} } as never,
    });
    try {
      const target = theoremTarget({ name: "t", statement: "theorem t : True", context: "", imports: [], header: "" }, "");
      const start = { line: 1, column: 0 };
      const theorem = { contextEnd: start, signatureStart: { line: 1, column: 9 }, statementFollowsModelText: false };
      const outcome = await checker.check(target, { text: "theorem t : True := trivial", proofStart: { line: 1, column: 20 }, theorem });
      expect(outcome.kind).toBe("failed");
      const report = JSON.parse((outcome as { reason: string }).reason) as Pick<Report, "uid" | "pids" | "writes"> & { reads: string[] };
      expect(report.uid).toBe(65534);
      expect(report.pids).not.toContain(String(process.pid));
      expect(report.reads).toEqual(["error:ENOENT", "error:ENOENT", "error:ENOENT"]);
      // Its working directory is its own check directory: writable, and removed after the check.
      expect(report.writes).toEqual({ own: "written", tmp: "written", cwd: "written" });
    } finally {
      rmSync(worker, { recursive: true, force: true });
      await otherReplay.remove();
    }
  });
});
