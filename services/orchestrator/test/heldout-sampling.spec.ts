// The held-out evaluation's sampling settings in a run config: eval.samples and eval.k, and
// what they may not be (a k above the samples, repair turns with sampling).
import { describe, expect, it } from "vitest";
import { parseRunConfig } from "../src/run/config/parse-run-config.js";
import { evalTurns } from "../src/run/training/heldout-context.js";

describe("eval.samples and eval.k", () => {
  it("default to one greedy completion and pass@1", () => {
    const config = parseRunConfig({}, []);
    expect(config.eval.samples).toBe(1);
    expect(config.eval.k).toEqual([1]);
  });

  it("take several k up to the samples", () => {
    const config = parseRunConfig({ eval: { data: "h.jsonl", samples: 32, k: [1, 8, 32] } }, []);
    expect(config.eval).toMatchObject({ samples: 32, k: [1, 8, 32] });
  });

  it("refuse a k above the samples, naming the key and what to set", () => {
    expect(() => parseRunConfig({ eval: { samples: 8, k: [1, 16] } }, [])).toThrow(
      /eval\.k\.1.*16 is larger than eval\.samples \(8\).*raise eval\.samples to 16 or more/,
    );
  });

  it("refuse sampling together with repair turns; a repair run samples its evaluation in one turn", () => {
    expect(() => parseRunConfig({ eval: { samples: 4, k: [1, 4], max_turns: 2 } }, [])).toThrow(/eval\.samples.*set one of them to 1/);
    const repair = parseRunConfig({ training: { mode: "repair" }, eval: { samples: 4, k: [1, 4] } }, []);
    expect(evalTurns(repair)).toBe(1);
    expect(evalTurns(parseRunConfig({ training: { mode: "repair" } }, []))).toBe(repair.rollout.max_turns);
  });
});
