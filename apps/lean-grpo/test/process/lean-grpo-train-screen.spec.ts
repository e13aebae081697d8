// `lean-grpo train` on a terminal, read off the screen (tmux): the progress line says the
// time left with units ("about 12s left", never cli-progress's bare seconds) and where the
// last step's time went, generation hidden behind training named apart (arith.yaml trains
// async); the summary shows that overlap and the held-out evaluation time, and wraps its
// values at word boundaries on a narrow terminal.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../../../tests/support/interop-verifier.js";

const haveTmux = (() => {
  try {
    execFileSync("tmux", ["-V"]);
    return true;
  } catch {
    return false;
  }
})();
if (!haveTmux) console.warn("train screen test skipped: tmux is absent (apt-get install tmux)");

const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });

describe.skipIf(!haveTmux)("lean-grpo train on a terminal", () => {
  it("shows the time left with units, the last step's split with hidden generation, and a word-wrapped summary", async () => {
    const runsDir = mkdtempSync(path.join(tmpdir(), "lean-grpo-screen-"));
    const session = `lean-grpo-screen-${process.pid}`;
    const command = [
      process.execPath,
      `${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`,
      "train",
      "examples/arith.jsonl",
      "--config",
      "configs/train/arith.yaml",
      "training.steps=3",
      "training.batch_size=2",
      "training.num_generations=2",
      "eval.max_problems=4",
      "eval.every=2",
      `runs_dir=${runsDir}`,
    ].join(" ");
    // The summary's value column is at most 100 wide, so its long values wrap here too.
    tmux(
      "new-session",
      "-d",
      "-s",
      session,
      "-x",
      "200",
      "-y",
      "60",
      "-c",
      repoRoot,
      `LOG_LEVEL=warn ${command}; echo EXITED $?; sleep 60`,
    );
    const screens: string[] = [];
    try {
      const deadline = Date.now() + 150_000;
      for (;;) {
        const screen = tmux("capture-pane", "-p", "-J", "-t", session);
        screens.push(screen);
        if (screen.includes("EXITED") || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const final = screens.at(-1)!;
      expect(final).toContain("EXITED 0");
      const bars = screens.flatMap((s) => s.split("\n")).filter((l) => l.includes("elapsed, "));
      expect(bars.length).toBeGreaterThan(0);
      // Before the first step there is nothing to measure; after it, a duration with units.
      for (const line of bars)
        expect(line).toMatch(/\d+s elapsed, (time left known after the first step|about \d+(s|m\d\ds|h\d\dm) left) \|/);
      expect(bars.some((l) => /about \d+s left/.test(l))).toBe(true);
      expect(bars.some((l) => /step \d+\.\ds: train \d+\.\ds, generate \d+\.\ds \+ \d+\.\ds hidden behind training/.test(l))).toBe(true);

      const rows = summaryRows(final.slice(final.indexOf("┌")));
      expect(rows.get("state")).toBe("COMPLETED");
      // Values rejoined from their wrapped lines with one space read as written: no word was cut.
      expect(rows.get("overlapped")).toMatch(
        /^generation hidden behind training: \d+\.\d s \(the next step's rollouts sampled while a step trained, training\.async; not in the step time\)$/,
      );
      expect(rows.get("held-out eval")).toMatch(/^\d+\.\d s over 3 evaluations, \d+\.\d s each \(not in the step time\)$/);
      expect(rows.get("held-out")).toMatch(/^\d+\.\d% after step 0 -> \d+\.\d% after step 3 \(greedy, 4 problems, 3 evaluations/);
    } finally {
      try {
        tmux("kill-session", "-t", session);
      } catch {}
      rmSync(runsDir, { recursive: true, force: true });
    }
  }, 180_000);
});

/** The summary table's rows: key -> value, each value's wrapped lines joined by one space. */
function summaryRows(table: string): Map<string, string> {
  const rows = new Map<string, string>();
  let key = "";
  for (const line of table.split("\n")) {
    if (!line.startsWith("│")) {
      key = "";
      continue;
    }
    const [, k = "", v = ""] = line.split("│");
    if (key === "") key = k.trim();
    rows.set(key, [rows.get(key), v.trim()].filter(Boolean).join(" "));
  }
  return rows;
}
