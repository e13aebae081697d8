// The training set: read whole up to max_dataset_bytes (as every set was), streamed above it:
// its rows read batch by batch, a sample validated before the run starts, a bad record met
// later named by its row and field.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PathRoot } from "@lean-grpo/kit";
import { describe, expect, it } from "vitest";
import { AUTO_OPTIONS } from "../src/data/dataset-options.js";
import { rootPlace } from "../src/data/dataset-place.js";
import { SAMPLE_ROWS } from "../src/data/load-dataset.js";
import { mathlibNamesIn } from "../src/data/mathlib-names.js";
import { openTrainingSet } from "../src/data/training-set.js";
import { DataOrder } from "../src/run/rollout/data-order.js";

const dir = mkdtempSync(path.join(tmpdir(), "training-set-"));
const place = rootPlace(new PathRoot({ dir, key: "data_root" }), "dataset_path");
const record = (i: number) => JSON.stringify({ id: `p${i}`, problem: `${i} + 1`, answer: String(i + 1) });

function write(name: string, lines: string[]): string {
  writeFileSync(path.join(dir, name), `${lines.join("\n")}\n`);
  return name;
}

describe("openTrainingSet", () => {
  const rows = 5_000;
  const file = write(
    "many.jsonl",
    Array.from({ length: rows }, (_, i) => record(i)),
  );

  it("reads a set up to max_dataset_bytes whole, into memory", async () => {
    const set = await openTrainingSet(place, file, AUTO_OPTIONS, { maxBytes: 1 << 30, maxTrainSamples: null });
    expect([set.streamed, set.size, set.checked.length]).toEqual([false, rows, rows]);
    expect((await set.at([4_999, 0])).map((t) => t.id)).toEqual(["p4999", "p0"]);
  });

  it("streams a larger one: the same records, a bounded sample checked before start", async () => {
    const set = await openTrainingSet(place, file, AUTO_OPTIONS, { maxBytes: 1_000, maxTrainSamples: null });
    try {
      expect([set.streamed, set.size]).toEqual([true, rows]);
      expect(set.checked.length).toBe(2 * SAMPLE_ROWS);
      expect(set.checked[0]!.id).toBe("p0");
      // Any batch the data order picks, in its order, equal to the record at that line.
      const order = new DataOrder(set.size, 7);
      const batch = order.batch(3, 16);
      expect((await set.at(batch)).map((t) => t.id)).toEqual(batch.map((i) => `p${i}`));
      expect((await set.at([rows - 1])).map((t) => t.answer)).toEqual([String(rows)]);
    } finally {
      await set.close();
    }
  });

  it("max_train_samples bounds what a streamed set draws from and samples", async () => {
    const set = await openTrainingSet(place, file, AUTO_OPTIONS, { maxBytes: 1_000, maxTrainSamples: 300 });
    try {
      expect(set.size).toBe(300);
      expect(Math.max(...set.checked.map((t) => Number(t.id.slice(1))))).toBeLessThan(300);
    } finally {
      await set.close();
    }
  });

  it("a bad record the sample did not meet stops the batch that reads it, naming its line and field", async () => {
    const lines = Array.from({ length: 2_000 }, (_, i) => record(i));
    lines[1_500] = JSON.stringify({ id: "bad", problem: "x" });
    const set = await openTrainingSet(place, write("late-bad.jsonl", lines), AUTO_OPTIONS, { maxBytes: 1_000, maxTrainSamples: null });
    try {
      await expect(set.at([3, 1_500])).rejects.toThrow('dataset late-bad.jsonl, line 1501, field "answer": is missing; nothing was loaded');
    } finally {
      await set.close();
    }
  });

  it("a bad record in the sample refuses the set before start", async () => {
    const lines = Array.from({ length: 2_000 }, (_, i) => record(i));
    lines[5] = "{not json";
    await expect(
      openTrainingSet(place, write("early-bad.jsonl", lines), AUTO_OPTIONS, { maxBytes: 1_000, maxTrainSamples: null }),
    ).rejects.toThrow(/line 6: not valid JSON/);
  });

  it("keeps line numbers across blank lines and CRLF", async () => {
    const name = "blank.jsonl";
    writeFileSync(path.join(dir, name), `${record(0)}\r\n\r\n\n${record(1)}\r\n   \n${record(2)}`);
    const set = await openTrainingSet(place, name, AUTO_OPTIONS, { maxBytes: 10, maxTrainSamples: null });
    try {
      expect(set.size).toBe(3);
      expect((await set.at([2, 1])).map((t) => t.id)).toEqual(["p2", "p1"]);
    } finally {
      await set.close();
    }
  });
});

describe("mathlibNamesIn", () => {
  it("finds Mathlib names and notation, not core Lean's, nor words in comments", () => {
    expect(mathlibNamesIn("theorem t (n : Nat) : n + 0 = n")).toEqual([]);
    expect(mathlibNamesIn("theorem t (a b : Int) (h : a ∣ b) : Nat.gcd 2 4 = 2 -- Real.sqrt ℝ")).toEqual([]);
    expect(mathlibNamesIn("theorem t : Real.sqrt 4 = 2")).toEqual(["Real"]);
    expect(mathlibNamesIn("theorem t (p : ℕ) (hp : Nat.Prime p) : ∑ i ∈ Finset.range p, i ≥ 0")).toEqual(["ℕ", "Nat.Prime", "∑"]);
    expect(mathlibNamesIn("theorem t (x : ℝ) : x ^ 2 ≥ 0")).toEqual(["ℝ"]);
  });
});
