// A training run whose Lean theorems take whole-file proofs (dataset.proof_format:
// whole_file), through the real mesh with the REPL stand-in and the checker stand-in:
// the prompt is prompt.whole_file_template, every completion is read as a whole Lean
// file (the screen refuses what is not one, before Lean), samples.jsonl records the
// format, and the run completes. The attacks themselves are scored by ScoreGroup, the
// call the run makes (tests/security/whole-file-entry-points.spec.ts): the tiny model
// cannot be made to write them.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunState } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { meshFixture, tinyTraining, type MeshFixture } from "./support/mesh-fixture.js";
import { watchToEnd, withMesh } from "./support/orchestrator-client.js";
import { replStandIn, type ReplStandIn } from "./support/repl-stand-in.js";

const STATEMENT = "theorem t (p : Prop) (h : p) : p";
const TEMPLATE = "{statement} := by sorry\n-- file:\n";

interface KeptSamples {
  samples: { prompt: string; completion: string; verdict: string; proof_format?: string; messages: string[] }[];
}

let fixture: MeshFixture;
let repl: ReplStandIn;
beforeAll(async () => {
  const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("");
  fixture = await meshFixture({ extraChars: ascii });
  // Every command elaborates without messages: whatever reaches "Lean" is proved.
  repl = replStandIn({ rules: [{ when: { cmd: { regex: "" } } }] });
});
afterAll(async () => {
  repl?.cleanup();
  await fixture?.cleanup();
});

describe("a run on whole-file proofs", () => {
  it("prompts for a file, reads every completion as one, records the format and completes", async () => {
    const dataset = path.join(fixture.dir, "whole-file.jsonl");
    await writeFile(dataset, ["t-1", "t-2"].map((id) => JSON.stringify({ id, name: "t", statement: STATEMENT })).join("\n"));
    const final = await withMesh(await fixture.start({ verifier: repl.verifierSection }), async (client) => {
      await client.startRun({
        runId: "whole-file",
        datasetPath: path.basename(dataset),
        config: {
          training: tinyTraining(1),
          dataset: { proof_format: "whole_file" },
          report: { samples_per_step: 4 },
          prompt: { format: "text", whole_file_template: TEMPLATE },
        },
      });
      return watchToEnd(client, "whole-file");
    });
    expect(final.error).toBe("");
    expect(final.state).toBe(RunState.COMPLETED);

    const kept = (await readFile(path.join(final.outputDir, "samples.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .flatMap((line) => (JSON.parse(line) as KeptSamples).samples);
    expect(kept.length).toBeGreaterThan(0);
    for (const sample of kept) {
      expect(sample.prompt).toBe(TEMPLATE.replace("{statement}", STATEMENT));
      expect(sample.proof_format).toBe("whole_file");
    }
    // Random text is no Lean file ending in theorem `t`: the screen refused it, and Lean saw none of it.
    // (A completion with no code at all, only comments, is not sent.)
    expect(kept.every((s) => s.verdict === "REJECTED" || s.verdict === "")).toBe(true);
    expect(kept.some((s) => s.verdict === "REJECTED")).toBe(true);
    expect(repl.requests().filter((r) => r.kind === "command" && r.cmd.includes("theorem t"))).toEqual([]);
  }, 120_000);
});
