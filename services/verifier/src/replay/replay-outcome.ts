// What a comparator run says, read from its exit code and output (leanprover/comparator
// Main.lean): it prints "Building M", "Exporting [...] from M", "Running ... kernel"
// as it goes, "Your solution is okay!" and exits 0 when every check passes, and
// otherwise ends with an uncaught exception (stderr "uncaught exception: ...", exit
// 1). A failure while the challenge (the service's own text) is built or exported
// means the checker could not check — infrastructure, not the proof; any failure
// after that refuses the solution.
import { CHALLENGE_MODULE } from "./replay-modules.js";
import type { CheckerRun } from "./checker-process.js";

export const ACCEPTED_LINE = "Your solution is okay!";

export type ReplayOutcome =
  | { kind: "accepted"; ms: number }
  /** The solution failed the replay: statement, axioms or kernel. */
  | { kind: "refused"; reason: string; ms: number }
  /** The checker could not check (did not start, or the challenge did not build). */
  | { kind: "failed"; reason: string; ms: number }
  | { kind: "timeout"; ms: number };

export function readReplayOutcome(run: CheckerRun): ReplayOutcome {
  const { ms } = run;
  if (run.spawnError !== undefined) return { kind: "failed", reason: `the checker did not start: ${run.spawnError}`, ms };
  if (run.timedOut) return { kind: "timeout", ms };
  const stdoutLines = run.stdout.split("\n").map((line) => line.trim());
  if (run.exitCode === 0 && stdoutLines.includes(ACCEPTED_LINE)) return { kind: "accepted", ms };
  const stage = lastStage(stdoutLines);
  const reason = errorOf(run) ?? (run.exitCode === 0 ? `it exited 0 without "${ACCEPTED_LINE}"` : `it exited ${run.exitCode}`);
  if (stage === undefined || stage.module === CHALLENGE_MODULE) {
    return { kind: "failed", reason: `${stage ? `${stage.line}: ` : ""}${reason}`, ms };
  }
  return { kind: "refused", reason: `${stage.line}: ${reason}`, ms };
}

interface Stage {
  line: string;
  /** The module the stage works on; undefined for the checks after both are built. */
  module: string | undefined;
}

function lastStage(lines: readonly string[]): Stage | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    const building = /^Building (\S+)$/u.exec(line);
    if (building) return { line, module: building[1] };
    const exporting = /^Exporting .* from (\S+)$/u.exec(line);
    if (exporting) return { line, module: exporting[1] };
    if (/kernel/iu.test(line)) return { line, module: undefined };
  }
  return undefined;
}

/** The exception comparator ended with, else the last line on stderr. */
function errorOf(run: CheckerRun): string | undefined {
  const lines = run.stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const uncaught = lines.findLast((line) => line.startsWith("uncaught exception:"));
  return (uncaught?.slice("uncaught exception:".length).trim() || lines.at(-1))?.slice(0, 500);
}
