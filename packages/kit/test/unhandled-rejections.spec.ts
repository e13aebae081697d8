// The guard in a real process: Node's default for an unhandled rejection is to exit
// with code 1; with the guard the process logs each one, counts it and lives on.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const script = fileURLToPath(new URL("./support/reject-unhandled.ts", import.meta.url));

describe("surviveUnhandledRejections", () => {
  it("logs and counts unhandled rejections instead of exiting", async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", script], { timeout: 20_000 });
    expect(JSON.parse(stdout)).toEqual({ survived: 2 });
    const logged = stderr
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { msg: string; unhandledRejections: number; err: { message: string } });
    expect(logged.map((l) => [l.unhandledRejections, l.err.message])).toEqual([
      [1, "first rejection nobody handled"],
      [2, "second rejection nobody handled"],
    ]);
    expect(logged[0]!.msg).toContain("keeps serving");
  });
});
