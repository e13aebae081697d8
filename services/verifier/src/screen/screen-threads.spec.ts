// The screen threads answer exactly what the screen answers in line, on every kind of
// token table, and while they screen long proofs the main thread's timers keep firing.
import { afterAll, describe, expect, it } from "vitest";
import { BUILTIN_COMMAND_TOKENS, BUILTIN_TABLE, BUILTIN_TOKENS, makeTokenTable, PRESUMED_TABLE, tablesAfterContext } from "@lean-grpo/lean";
import { prepareProof, prepareProofStart, prepareTactic } from "../verdict/proof-source.js";
import { theoremTarget } from "../verdict/theorem-target.js";
import { ScreenThreads } from "./screen-threads.js";

const threads = new ScreenThreads(2);
afterAll(() => threads.close());

const environment = makeTokenTable([...BUILTIN_TOKENS, "×ˢ", "#s"], BUILTIN_COMMAND_TOKENS, "environment");
const target = theoremTarget(
  { name: "", header: "import Mathlib", imports: [], statement: "theorem t (n : Nat) : n + 0 = n", context: 'notation "+1a" => (0 : Nat)' },
  "import Mathlib",
);
const PROOFS = ["by simp", "by exact?", "by simp\n#eval 1", "by exact +1a'\"'\n#eval IO.Process.exit 7 -- \"", "-- nothing"];

/** A proof the screen accepts, `kb` KiB of Aesop clauses (linear to screen, but long). */
const aesop = (kb: number) => `by aesop ${"(add)".repeat((kb * 1024) / 5)} (add unsafe apply trivial)`;

describe("ScreenThreads", () => {
  it.each([BUILTIN_TABLE, PRESUMED_TABLE, environment])("answers as the screen in line on the %#th table", async (table) => {
    for (const proof of PROOFS) {
      expect(await threads.proof(target, proof, table), proof).toEqual(prepareProof(target, proof, table));
      expect(await threads.tactic(proof, "t", target.context, table), proof).toEqual(
        prepareTactic(proof, "t", tablesAfterContext(target.context, table)),
      );
    }
    expect(await threads.start(target, table)).toEqual(prepareProofStart(target, table));
  });

  it("refuses a tactic that uses an atom of the session's context to hide a command", async () => {
    const tactic = "have h : Nat := +1a'\"'\n#eval IO.Process.exit 7\n-- \"";
    expect(await threads.tactic(tactic, "t", target.context, BUILTIN_TABLE)).toMatchObject({ ok: false });
    expect(await threads.tactic("simp", "t", target.context, BUILTIN_TABLE)).toEqual({ ok: true, value: "simp" });
  });

  it("keeps the main thread's timers firing while it screens long proofs, where screening in line does not", async () => {
    const longestGap = async (screen: () => Promise<unknown>) => {
      let last = performance.now();
      let longest = 0;
      const timer = setInterval(() => {
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
      }, 5);
      await screen();
      clearInterval(timer);
      return Math.max(longest, performance.now() - last);
    };
    const proofs = Array.from({ length: 3 }, () => aesop(40));
    await threads.proof(target, proofs[0]!, BUILTIN_TABLE); // warm: the threads have started
    const inLine = new ScreenThreads(0);
    const inLineGap = await longestGap(() => Promise.all(proofs.map((proof) => inLine.proof(target, proof, BUILTIN_TABLE))));
    const threadedGap = await longestGap(() => Promise.all(proofs.map((proof) => threads.proof(target, proof, BUILTIN_TABLE))));
    expect(threadedGap, `longest timer gap ${threadedGap.toFixed(0)} ms in threads, ${inLineGap.toFixed(0)} ms in line`).toBeLessThan(
      inLineGap / 2,
    );
  }, 120_000);
});
