// Where a process's logs go: stderr by default (a service on its own), one file per logger
// under a directory when configured (`lean-grpo train`), both when asked; threads and child
// processes started afterwards inherit the destination through the environment.
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, existsSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const log = new URL("./log.ts", import.meta.url).pathname;

/** Runs `body` in a fresh Node process with the kit's log module imported as `kit`. */
function runScript(body: string, env: Record<string, string> = {}) {
  const script = `const kit = await import(${JSON.stringify(log)});\n${body}`;
  const result = spawnSync(process.execPath, ["--import", "tsx/esm", "--input-type=module", "-e", script], {
    env: { ...process.env, VITEST: "", LOG_LEVEL: "info", LEANGRPO_LOG_DIR: "", LEANGRPO_LOG_ROOT: "", LEANGRPO_LOG_STDERR: "", ...env },
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`script failed (${result.status}): ${result.stderr}`);
  return result;
}

const lines = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { name: string; msg: string });

describe("log destination", () => {
  it("writes JSON lines to stderr when nothing is configured", () => {
    const { stderr } = runScript(`kit.createLogger("verifier").info("serving");`);
    expect(lines(stderr)).toMatchObject([{ name: "verifier", msg: "serving" }]);
  });

  it("writes each logger's lines to <dir>/<name>.log and nothing to stderr when given a directory", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "kit-log-"));
    try {
      // Created before the destination is set, as services' module-level loggers are.
      const { stderr } = runScript(
        `const a = kit.createLogger("inference"); const b = kit.createLogger("learner");
         kit.configureLogDestination({ dir: ${JSON.stringify(path.join(dir, "logs"))}, stderr: false });
         a.info("one"); b.warn("two"); a.info("three");`,
      );
      expect(stderr).toBe("");
      expect(lines(readFileSync(path.join(dir, "logs", "inference.log"), "utf8")).map((l) => l.msg)).toEqual(["one", "three"]);
      expect(lines(readFileSync(path.join(dir, "logs", "learner.log"), "utf8")).map((l) => l.msg)).toEqual(["two"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes to both with stderr on, and a child process inherits the destination", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "kit-log-"));
    try {
      const { stderr } = runScript(
        `kit.configureLogDestination({ dir: ${JSON.stringify(dir)}, stderr: true });
         kit.createLogger("reward").info("parent");
         const { execFileSync } = await import("node:child_process");
         execFileSync(process.execPath, ["--import", "tsx/esm", "--input-type=module", "-e",
           "const kit = await import(" + JSON.stringify(${JSON.stringify(log)}) + "); kit.createLogger('reward').info('child');"],
           { stdio: "inherit" });`,
      );
      expect(lines(stderr).map((l) => l.msg)).toEqual(["parent", "child"]);
      expect(lines(readFileSync(path.join(dir, "reward.log"), "utf8")).map((l) => l.msg)).toEqual(["parent", "child"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("creates no file before a line is written", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "kit-log-"));
    try {
      runScript(`kit.configureLogDestination({ dir: ${JSON.stringify(path.join(dir, "logs"))}, stderr: false }); kit.createLogger("x");`);
      expect(existsSync(path.join(dir, "logs"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("never appends through a symlink planted where a log file goes: that logger's lines go to stderr", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "kit-log-"));
    try {
      mkdirSync(path.join(dir, "logs"));
      writeFileSync(path.join(dir, "victim.txt"), "VICTIM\n");
      symlinkSync(path.join(dir, "victim.txt"), path.join(dir, "logs", "learner.log"));
      const { stderr } = runScript(
        `kit.configureLogDestination({ dir: ${JSON.stringify(path.join(dir, "logs"))}, stderr: false });
         kit.createLogger("learner").info("one"); kit.createLogger("learner").info("two"); kit.createLogger("reward").info("kept");`,
      );
      expect(readFileSync(path.join(dir, "victim.txt"), "utf8")).toBe("VICTIM\n");
      expect(stderr).toContain(`log file ${path.join(dir, "logs", "learner.log")} refused (it is a symlink); its lines go to stderr`);
      expect(lines(stderr).map((l) => l.msg)).toEqual(["one", "two"]);
      expect(lines(readFileSync(path.join(dir, "logs", "reward.log"), "utf8")).map((l) => l.msg)).toEqual(["kept"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("with a root, walks to the folder from it in every process: a run folder swapped for a symlink after start-up is not followed", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "kit-log-"));
    try {
      const runs = path.join(dir, "runs");
      mkdirSync(path.join(runs, "r1", "logs"), { recursive: true });
      mkdirSync(path.join(dir, "outside", "logs"), { recursive: true });
      // The run folder made by the command, then swapped for a symlink out before any line is written.
      const { stderr } = runScript(
        `kit.configureLogDestination({ dir: ${JSON.stringify(path.join(runs, "r1", "logs"))}, root: ${JSON.stringify(runs)}, stderr: false });
         const fs = await import("node:fs");
         fs.rmSync(${JSON.stringify(path.join(runs, "r1"))}, { recursive: true });
         fs.symlinkSync(${JSON.stringify(path.join(dir, "outside"))}, ${JSON.stringify(path.join(runs, "r1"))});
         kit.createLogger("learner").info("kept out");`,
      );
      expect(existsSync(path.join(dir, "outside", "logs", "learner.log"))).toBe(false);
      expect(stderr).toContain('the log folder "r1" is a symlink');
      expect(lines(stderr).map((l) => l.msg)).toEqual(["kept out"]);
      // Without the swap, the same destination writes its file, and a child process finds it from the root too.
      rmSync(path.join(runs, "r1"));
      mkdirSync(path.join(runs, "r1", "logs"), { recursive: true });
      runScript(
        `kit.configureLogDestination({ dir: ${JSON.stringify(path.join(runs, "r1", "logs"))}, root: ${JSON.stringify(runs)}, stderr: false });
         const { execFileSync } = await import("node:child_process");
         execFileSync(process.execPath, ["--import", "tsx/esm", "--input-type=module", "-e",
           "const kit = await import(" + JSON.stringify(${JSON.stringify(log)}) + "); kit.createLogger('learner').info('child');"],
           { stdio: "inherit", env: { ...process.env } });`,
        { LEANGRPO_LOG_ROOT: "" },
      );
      expect(lines(readFileSync(path.join(runs, "r1", "logs", "learner.log"), "utf8")).map((l) => l.msg)).toEqual(["child"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
