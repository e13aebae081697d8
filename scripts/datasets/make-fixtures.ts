// Writes the dataset fixtures the orchestrator's format and layout tests read
// (services/orchestrator/test/fixtures/datasets/), with writers independent of the readers
// under test: parquet-wasm (the Rust arrow/parquet crates) writes every parquet file, with each
// compression, and the Arrow IPC streams of the `datasets` save_to_disk folders; apache-arrow
// only builds the in-memory columns it starts from. Run: npx tsx scripts/datasets/make-fixtures.ts
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Field, List, Table, Utf8, type Vector, tableToIPC, vectorFromArray } from "apache-arrow";
import { Compression, Table as WasmTable, WriterPropertiesBuilder, readParquet, writeParquet } from "parquet-wasm/node";
import { LAYOUT_ROWS, type Row } from "./layout-rows.js";

const OUT = path.resolve(import.meta.dirname, "../../services/orchestrator/test/fixtures/datasets");

/** Columns of strings (and lists of strings), never dictionary-encoded: as `datasets` writes them. */
function arrowTable(rows: readonly Row[]): Table {
  const names = Object.keys(rows[0]!);
  const columns: Record<string, Vector> = {};
  for (const name of names) {
    const values = rows.map((row) => row[name]);
    columns[name] = Array.isArray(values[0])
      ? vectorFromArray(values, new List(new Field("item", new Utf8(), true)))
      : vectorFromArray(values as string[], new Utf8());
  }
  return new Table(columns);
}

function parquetBytes(rows: readonly Row[], compression: Compression, rowGroupSize = 2): Uint8Array {
  const table = WasmTable.fromIPCStream(tableToIPC(arrowTable(rows), "stream"));
  const properties = new WriterPropertiesBuilder().setCompression(compression).setMaxRowGroupSize(rowGroupSize).build();
  return writeParquet(table, properties);
}

/** An Arrow IPC stream written by arrow-rs (through a parquet round trip), as save_to_disk's data-*.arrow. */
function arrowStreamBytes(rows: readonly Row[]): Uint8Array {
  return readParquet(parquetBytes(rows, Compression.UNCOMPRESSED, 2)).intoIPCStream();
}

function saveToDisk(dir: string, shards: readonly (readonly Row[])[], split: string): void {
  mkdirSync(dir, { recursive: true });
  const files = shards.map((_, i) => `data-${String(i).padStart(5, "0")}-of-${String(shards.length).padStart(5, "0")}.arrow`);
  for (const [i, rows] of shards.entries()) writeFileSync(path.join(dir, files[i]!), arrowStreamBytes(rows));
  const features = Object.fromEntries(Object.keys(shards[0]![0]!).map((name) => [name, { dtype: "string", _type: "Value" }]));
  writeFileSync(
    path.join(dir, "dataset_info.json"),
    `${JSON.stringify({ citation: "", description: "", features, homepage: "", license: "" }, null, 2)}\n`,
  );
  writeFileSync(
    path.join(dir, "state.json"),
    `${JSON.stringify({ _data_files: files.map((filename) => ({ filename })), _fingerprint: "fixture", _format_columns: null, _format_kwargs: {}, _format_type: null, _output_all_columns: false, _split: split }, null, 2)}\n`,
  );
}

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
for (const [layout, rows] of Object.entries(LAYOUT_ROWS)) {
  writeFileSync(path.join(OUT, `${layout}.jsonl`), rows.map((row) => JSON.stringify(row)).join("\n") + "\n");
  writeFileSync(path.join(OUT, `${layout}.parquet`), parquetBytes(rows, Compression.SNAPPY));
}
const codecs: [string, Compression][] = [
  ["uncompressed", Compression.UNCOMPRESSED],
  ["snappy", Compression.SNAPPY],
  ["gzip", Compression.GZIP],
  ["zstd", Compression.ZSTD],
  ["brotli", Compression.BROTLI],
  ["lz4", Compression.LZ4_RAW],
];
for (const [name, codec] of codecs) writeFileSync(path.join(OUT, `minif2f.${name}.parquet`), parquetBytes(LAYOUT_ROWS.minif2f, codec));

const minif2f = LAYOUT_ROWS.minif2f;
saveToDisk(path.join(OUT, "minif2f-dataset"), [minif2f.slice(0, 2), minif2f.slice(2)], "");
const dict = path.join(OUT, "minif2f-dict");
saveToDisk(path.join(dict, "train"), [minif2f.slice(0, 2)], "train");
saveToDisk(path.join(dict, "test"), [minif2f.slice(2)], "test");
writeFileSync(path.join(dict, "dataset_dict.json"), `${JSON.stringify({ splits: ["train", "test"] })}\n`);
const validOnly = path.join(OUT, "proofnet-dict");
saveToDisk(path.join(validOnly, "valid"), [LAYOUT_ROWS["proofnet-lean4"]], "valid");
saveToDisk(path.join(validOnly, "test"), [LAYOUT_ROWS["proofnet-lean4"]], "test");
writeFileSync(path.join(validOnly, "dataset_dict.json"), `${JSON.stringify({ splits: ["valid", "test"] })}\n`);
// TRL-style conversational prompts (JSONL: a list of {role, content} per record), one with a verl-style reward_model.
writeFileSync(
  path.join(OUT, "conversational.jsonl"),
  [
    { prompt: [{ role: "user", content: "What is 12 * 12?" }], answer: "144" },
    { prompt: [{ role: "user", content: "What is 7 + 8?" }], reward_model: { style: "rule", ground_truth: "15" }, data_source: "arith" },
  ]
    .map((row) => JSON.stringify(row))
    .join("\n") + "\n",
);
console.log(`wrote ${OUT}`);
