// bench/data: does a multi-GB corpus start as fast as a small one, within a memory bound?
// Writes, in a temporary folder, Goedel-Pset-like Lean records (id, informal and formal
// statement, ~560 bytes a record) as a small JSONL (2,000 records), a ~1 GB JSONL and a large
// parquet (row groups of 100,000, snappy, written by parquet-wasm), then measures each in a
// fresh process (first-batch.ts): time from opening to the first step's batch, and peak RSS.
// The small file is the baseline, measured in the same run. Prints JSON.
// Usage: npx tsx bench/data/main.ts [JSONL_MIB] [PARQUET_RECORDS]
import { execFileSync } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Table, Utf8, tableToIPC, vectorFromArray } from "apache-arrow";
import { Compression, Table as WasmTable, WriterPropertiesBuilder, writeParquet } from "parquet-wasm/node";

const jsonlMiB = Number(process.argv[2] ?? 1024);
const parquetRecords = Number(process.argv[3] ?? 1_000_000);
const dir = mkdtempSync(path.join(tmpdir(), "bench-data-"));

function record(i: number) {
  return {
    problem_id: `goedel_pset_${i}`,
    informal_statement: `Let $n = ${i}$. Show that the sum of the first $n$ odd natural numbers equals $n^2$, and that this holds for every natural number $n$ by induction on $n$.`,
    formal_statement: `theorem goedel_pset_${i} (n : ℕ) (h : n = ${i}) : ∑ k ∈ Finset.range n, (2 * k + 1) = n ^ 2 := by sorry`,
  };
}

async function writeJsonl(name: string, targetBytes: number): Promise<number> {
  const out = createWriteStream(path.join(dir, name));
  let bytes = 0;
  let i = 0;
  while (bytes < targetBytes) {
    const lines: string[] = [];
    for (let k = 0; k < 10_000 && bytes < targetBytes; k++, i++) {
      const line = `${JSON.stringify(record(i))}\n`;
      bytes += Buffer.byteLength(line);
      lines.push(line);
    }
    if (!out.write(lines.join(""))) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return i;
}

function writeParquetFile(name: string, records: number): void {
  const rows = Array.from({ length: records }, (_, i) => record(i));
  const table = new Table({
    problem_id: vectorFromArray(
      rows.map((r) => r.problem_id),
      new Utf8(),
    ),
    informal_statement: vectorFromArray(
      rows.map((r) => r.informal_statement),
      new Utf8(),
    ),
    formal_statement: vectorFromArray(
      rows.map((r) => r.formal_statement),
      new Utf8(),
    ),
  });
  const properties = new WriterPropertiesBuilder().setCompression(Compression.SNAPPY).setMaxRowGroupSize(100_000).build();
  writeFileSync(path.join(dir, name), writeParquet(WasmTable.fromIPCStream(tableToIPC(table, "stream")), properties));
}

function measure(file: string) {
  const output = execFileSync(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "first-batch.ts"), dir, file], {
    encoding: "utf8",
    env: { ...process.env, LOG_LEVEL: "warn" },
  });
  return { ...JSON.parse(output.trim().split("\n").at(-1)!), mib_on_disk: Math.round(statSync(path.join(dir, file)).size / 2 ** 20) };
}

try {
  const small = await writeJsonl("small.jsonl", 2_000 * 560);
  const large = await writeJsonl("large.jsonl", jsonlMiB * 2 ** 20);
  writeParquetFile("large.parquet", parquetRecords);
  const results = { small: measure("small.jsonl"), large_jsonl: measure("large.jsonl"), large_parquet: measure("large.parquet") };
  const ratio = (x: { first_batch_ms: number }) => Number((x.first_batch_ms / Math.max(1, results.small.first_batch_ms)).toFixed(1));
  console.log(
    JSON.stringify(
      {
        bench: "data/first-batch",
        records_written: { small, large_jsonl: large, large_parquet: parquetRecords },
        ...results,
        first_batch_vs_small: { large_jsonl: ratio(results.large_jsonl), large_parquet: ratio(results.large_parquet) },
        load_average: (await import("node:os")).loadavg().map((l) => Number(l.toFixed(2))),
      },
      null,
      2,
    ),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
