// Each format and corpus layout, read from fixtures written by an independent writer
// (scripts/datasets/make-fixtures.ts: parquet-wasm), and each trap of a layout read right or
// refused before a run starts, naming the key to set.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { PathRoot } from "@lean-grpo/kit";
import { describe, expect, it } from "vitest";
import { DatasetError } from "../src/data/dataset-error.js";
import { AUTO_OPTIONS, type DatasetOptions } from "../src/data/dataset-options.js";
import { localPlace, rootPlace } from "../src/data/dataset-place.js";
import { loadDataset, openDataset } from "../src/data/load-dataset.js";

const FIXTURES = path.join(import.meta.dirname, "fixtures/datasets");
const root = new PathRoot({ dir: FIXTURES, key: "data_root" });
const files = { root, maxBytes: 1 << 20 };
const load = (given: string, options: Partial<DatasetOptions> = {}) =>
  loadDataset(files, given, "dataset_path", { ...AUTO_OPTIONS, ...options });

const MINIF2F_NAMES = ["mathd_algebra_10", "mathd_numbertheory_3", "amc12a_2002_p6"];

describe("dataset formats, chosen by what the path is", () => {
  it.each(["minif2f.jsonl", "minif2f.parquet", "minif2f-dataset"])("%s reads the same three records", async (given) => {
    const theorems = await load(given);
    expect(theorems.map((t) => t.id)).toEqual(MINIF2F_NAMES);
    expect(theorems[0]!.statement).toBe("theorem mathd_algebra_10 : abs ((-2 : ℝ) ^ 3) = 8");
    expect(theorems[0]!.header).toContain("import Mathlib");
    expect(theorems[0]!.metadata.goal).toBe("⊢ |(-2) ^ 3| = 8");
  });

  it.each(["uncompressed", "snappy", "gzip", "zstd", "brotli", "lz4"])("parquet compressed with %s", async (codec) => {
    const theorems = await load(`minif2f.${codec}.parquet`);
    expect(theorems.map((t) => t.id)).toEqual(MINIF2F_NAMES);
  });

  it("reads a parquet file by row group: any range of rows, across groups of two", async () => {
    const dataset = await openDataset(rootPlace(root, "dataset_path"), "minif2f.zstd.parquet");
    try {
      expect(dataset.description).toMatch(/^parquet \(2 row groups\), 3 records, layout minif2f \(detected from the columns\)/);
      expect((await dataset.range(1, 3)).map((t) => t.id)).toEqual(MINIF2F_NAMES.slice(1));
      expect((await dataset.at([2, 0])).map((t) => t.id)).toEqual([MINIF2F_NAMES[2], MINIF2F_NAMES[0]]);
    } finally {
      await dataset.close();
    }
  });

  it("a save_to_disk folder of two Arrow shards reads across them", async () => {
    const dataset = await openDataset(rootPlace(root, "dataset_path"), "minif2f-dataset");
    try {
      expect(dataset.size).toBe(3);
      expect(dataset.description).toContain("2 Arrow files");
      expect((await dataset.at([2, 1])).map((t) => t.id)).toEqual([MINIF2F_NAMES[2], MINIF2F_NAMES[1]]);
    } finally {
      await dataset.close();
    }
  });

  it("a DatasetDict folder: train by default, another split by dataset.split, or the split's own folder", async () => {
    expect((await load("minif2f-dict")).map((t) => t.id)).toEqual(MINIF2F_NAMES.slice(0, 2));
    expect((await load("minif2f-dict", { split: "test" })).map((t) => t.id)).toEqual(MINIF2F_NAMES.slice(2));
    expect((await load("minif2f-dict/test")).map((t) => t.id)).toEqual(MINIF2F_NAMES.slice(2));
  });

  it("a DatasetDict without the split asked for is refused listing its splits and the key", async () => {
    await expect(load("proofnet-dict")).rejects.toThrow(
      /DatasetDict with the splits "valid", "test"; it has no train split: set dataset.split/,
    );
    await expect(load("minif2f-dict", { split: "validation" })).rejects.toThrow(/no split "validation"/);
  });

  it("a directory that is not a datasets folder, and a file that is not parquet, say what is accepted", async () => {
    await expect(load("minif2f-dict/../minif2f-dict/train/..")).rejects.toThrow();
    const dir = await loadDataset(
      { root: new PathRoot({ dir: path.dirname(FIXTURES), key: "data_root" }), maxBytes: 1 << 20 },
      "datasets",
      "dataset_path",
    ).catch((e: Error) => e);
    expect((dir as Error).message).toMatch(/not a datasets folder: save_to_disk writes state.json/);
    const notParquet = await loadDataset(
      { root: new PathRoot({ dir: path.join(FIXTURES, ".."), key: "data_root" }), maxBytes: 1 << 20 },
      "datasets/minif2f.jsonl",
      "dataset_path",
    );
    expect(notParquet).toHaveLength(3);
  });

  it("a file that is one JSON array is refused saying how to convert it", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "json-array-"));
    writeFileSync(path.join(dir, "lean_workbook.json"), `[${JSON.stringify({ id: "a", formal_statement: "theorem a : True" })}]`);
    await expect(
      loadDataset({ root: new PathRoot({ dir, key: "data_root" }), maxBytes: 1 << 20 }, "lean_workbook.json", "dataset_path"),
    ).rejects.toThrow(/is one JSON array, not JSON Lines.*jq -c/);
  });

  it("the local reader (the CLI's pre-flight) reads the same", async () => {
    const dataset = await openDataset(localPlace(), path.join(FIXTURES, "proofnet.parquet"));
    try {
      expect((await dataset.range(0, 2)).map((t) => t.id)).toEqual(["Rudin|exercise_1_1a", "Rudin|exercise_1_2"]);
    } finally {
      await dataset.close();
    }
  });
});

describe("corpus layouts", () => {
  it("DeepSeek/Goedel miniF2F: informal_prefix reaches {informal} without its comment markers, header kept", async () => {
    const [first] = await load("minif2f.parquet");
    expect(first!.informalStatement).toBe("Compute $|(-2)^3|$. Show that it is 8.");
    expect(first!.header.startsWith("import Mathlib\nimport Aesop")).toBe(true);
    expect(first!.kind).toBe(TaskKind.LEAN_PROOF);
  });

  it("ProofNet (HF): src_header reaches the header and nl_statement {informal}", async () => {
    for (const given of ["proofnet.jsonl", "proofnet.parquet"]) {
      const [first] = await load(given);
      expect(first!.id).toBe("Rudin|exercise_1_1a");
      expect(first!.header).toContain("import Mathlib");
      expect(first!.informalStatement).toMatch(/^If \$r\$ is rational/);
      expect(first!.statement).toBe("theorem exercise_1_1a (x : ℝ) (y : ℚ) : ( Irrational x ) -> Irrational ( x + y )");
      expect(first!.metadata.nl_proof).toMatch(/^\\begin\{proof\}/);
    }
  });

  it("ProofNet's Lean 4 copy in the DeepSeek layout", async () => {
    const [first] = await load("proofnet-lean4.parquet", { layout: "proofnet-lean4" });
    expect(first!.id).toBe("exercise_1_13a");
    expect(first!.header).toContain("open Complex Filter");
    expect(first!.informalStatement).toMatch(/^Suppose that \$f\$ is holomorphic/);
  });

  it("Lean Workbook has no header: refused before start, naming dataset.header, unless one is configured", async () => {
    const refused = await load("lean-workbook.parquet").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DatasetError);
    expect((refused as Error).message).toMatch(
      /row 1, field "header": is empty and the statement uses Mathlib \(ℝ\).*Lean Workbook records carry no header.*set dataset.header/,
    );
    const theorems = await load("lean-workbook.parquet", { header: "import Mathlib" });
    expect(theorems.map((t) => [t.id, t.header])).toEqual([
      ["lean_workbook_plus_1", "import Mathlib"],
      ["lean_workbook_plus_2", "import Mathlib"],
    ]);
    expect(theorems[0]!.informalStatement).toMatch(/^Prove that \$a\^2/);
    expect(theorems[0]!.statement).toBe("theorem lean_workbook_plus_1 (a b : ℝ) : a ^ 2 + b ^ 2 ≥ 2 * a * b");
  });

  it("Goedel-Pset and PutnamBench presets map their columns", async () => {
    const [goedel] = await load("goedel-pset.parquet", { header: "import Mathlib" });
    expect([goedel!.id, goedel!.informalStatement]).toEqual(["goedel_pset_1", "Show that the sum of the first $n$ odd numbers is $n^2$."]);
    const [putnam] = await load("putnambench.parquet", { header: "import Mathlib" });
    expect(putnam!.id).toBe("putnam_1988_b1");
    expect(putnam!.statement.startsWith("theorem putnam_1988_b1 : ∀ a ≥ 2")).toBe(true);
    expect(putnam!.statement).not.toMatch(/sorry/);
    expect(putnam!.informalStatement).toMatch(/composite/);
  });

  it("a preset named by dataset.layout wins over detection, and dataset.fields overrides a preset's column", async () => {
    const theorems = await load("minif2f.jsonl", { layout: "minif2f", fields: { informal: "goal" } });
    expect(theorems[0]!.informalStatement).toBe("⊢ |(-2) ^ 3| = 8");
  });

  it("dataset.fields maps a layout of one's own; a missing mapped column is named as the column", async () => {
    const theorems = await load("putnambench.jsonl", {
      layout: "plain",
      fields: { name: "name", statement: "lean4_statement", informal: "informal_solution" },
      header: "import Mathlib",
    });
    expect(theorems[0]!.informalStatement).toBe("None.");
    await expect(load("putnambench.jsonl", { layout: "plain", fields: { name: "name", statement: "lean_statement" } })).rejects.toThrow(
      /no task fields/,
    );
    await expect(load("goedel-pset.jsonl", { layout: "lean-workbook", header: "import Mathlib" })).rejects.toThrow(
      /line 1, field "name": is missing \(a Lean record needs name or id\)/,
    );
  });

  it("a layout's statement issues name the corpus's column", async () => {
    await expect(load("putnambench.jsonl", { layout: "putnambench" })).rejects.toThrow(
      /line 1, field "header": is empty and the statement uses Mathlib/,
    );
  });

  it("TRL conversational records: the user turn is the problem, the answer from answer or reward_model.ground_truth", async () => {
    const theorems = await load("conversational.jsonl");
    expect(theorems.map((t) => [t.kind, t.informalStatement, t.answer])).toEqual([
      [TaskKind.MATH_ANSWER, "What is 12 * 12?", "144"],
      [TaskKind.MATH_ANSWER, "What is 7 + 8?", "15"],
    ]);
  });
});
