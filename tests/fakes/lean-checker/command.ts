// The checker stand-in as a command line for `repl.replay_checker.command`: node
// with tsx's loader by path (the checker runs in its check directory, where
// `--import tsx` would not resolve) and the REPL stand-in's rules file.
import { fileURLToPath } from "node:url";

export const CHECKER_STAND_IN = fileURLToPath(new URL("./main.ts", import.meta.url));
const TSX_LOADER = fileURLToPath(import.meta.resolve("tsx"));

export function checkerStandInCommand(rulesFile: string, logFile?: string): string[] {
  return [process.execPath, "--import", TSX_LOADER, CHECKER_STAND_IN, "--rules", rulesFile, ...(logFile ? ["--log", logFile] : [])];
}
