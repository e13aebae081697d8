// Which REPL to run: `repl.command` from the config, else the LEAN_REPL_CMD
// environment variable (the same one the real-Lean tests read), else none; and
// where: `repl.cwd`, else LEAN_REPL_CWD, else the service's own directory.
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import type { ReplConfig } from "../config.js";
import { splitCommand } from "./split-command.js";

export interface ReplCommand {
  argv: string[];
  cwd: string;
}

export function resolveReplCommand(config: ReplConfig, env: NodeJS.ProcessEnv): ReplCommand | undefined {
  const configured = typeof config.command === "string" ? splitCommand(config.command) : config.command;
  const argv = configured.length > 0 ? configured : splitCommand(env.LEAN_REPL_CMD ?? "");
  if (argv.length === 0) return undefined;
  return { argv, cwd: resolve(config.cwd ?? env.LEAN_REPL_CWD ?? ".") };
}

export interface ReplayCommand {
  argv: string[];
  workspace: string | undefined;
}

/** The replay checker to run: `repl.replay_checker.command`, else LEAN_REPLAY_CMD; its workspace likewise (LEAN_REPLAY_WORKSPACE). */
export function resolveReplayCommand(config: ReplConfig, env: NodeJS.ProcessEnv): ReplayCommand | undefined {
  const checker = config.replay_checker;
  const configured = typeof checker.command === "string" ? splitCommand(checker.command) : checker.command;
  const argv = configured.length > 0 ? configured : splitCommand(env.LEAN_REPLAY_CMD ?? "");
  if (argv.length === 0) return undefined;
  const workspace = checker.workspace ?? env.LEAN_REPLAY_WORKSPACE;
  return { argv, workspace: workspace === undefined || workspace === "" ? undefined : resolve(workspace) };
}

/**
 * Where `command` is found: a path (relative to `cwd`) or a name searched on PATH, as
 * spawn would. Checked before starting, since behind the sandbox's wrappers a
 * missing command looks like a REPL that died.
 */
export function findExecutable(command: string, cwd: string, path: string | undefined): string | undefined {
  const candidates = command.includes("/")
    ? [isAbsolute(command) ? command : join(cwd, command)]
    : (path ?? "")
        .split(delimiter)
        .filter((dir) => dir !== "")
        .map((dir) => join(dir, command));
  return candidates.find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
}
