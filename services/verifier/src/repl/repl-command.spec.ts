import { describe, expect, it } from "vitest";
import { resolve } from "node:path";
import { VerifierConfigSchema } from "../config.js";
import { findExecutable, resolveReplCommand } from "./repl-command.js";

const repl = (values: Record<string, unknown> = {}) => VerifierConfigSchema.parse({ repl: values }).repl;

describe("resolveReplCommand", () => {
  it("prefers repl.command (argv or one string) and repl.cwd", () => {
    expect(resolveReplCommand(repl({ command: ["lake", "env", "repl"], cwd: "/m" }), { LEAN_REPL_CMD: "other" })).toEqual({
      argv: ["lake", "env", "repl"],
      cwd: "/m",
    });
    expect(resolveReplCommand(repl({ command: "lake env '/opt/my repl'" }), {})?.argv).toEqual(["lake", "env", "/opt/my repl"]);
  });

  it("falls back to LEAN_REPL_CMD and LEAN_REPL_CWD", () => {
    expect(resolveReplCommand(repl(), { LEAN_REPL_CMD: "lake env ../repl/.lake/build/bin/repl", LEAN_REPL_CWD: "/mathlib" })).toEqual({
      argv: ["lake", "env", "../repl/.lake/build/bin/repl"],
      cwd: "/mathlib",
    });
    expect(resolveReplCommand(repl(), { LEAN_REPL_CMD: "repl" })?.cwd).toBe(resolve("."));
  });

  it("is undefined when no REPL is configured anywhere", () => {
    expect(resolveReplCommand(repl(), {})).toBeUndefined();
    expect(resolveReplCommand(repl(), { LEAN_REPL_CMD: "  " })).toBeUndefined();
  });
});

describe("findExecutable", () => {
  it("finds a name on PATH or a path, and nothing that is not an executable file", () => {
    expect(findExecutable("sh", "/", "/nonexistent:/bin:/usr/bin")).toMatch(/\/sh$/);
    expect(findExecutable(process.execPath, "/", "")).toBe(process.execPath);
    expect(findExecutable("no-such-repl-xyz", "/", "/bin:/usr/bin")).toBeUndefined();
    expect(findExecutable("./bin", "/", "")).toBeUndefined(); // a directory
    expect(findExecutable("sh", "/", undefined)).toBeUndefined();
  });
});
