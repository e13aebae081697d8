// A folder written by `datasets`' save_to_disk: state.json lists the Arrow IPC stream shards
// (data-00000-of-0000N.arrow) in order; a DatasetDict folder has dataset_dict.json naming its
// splits, each a folder of the first kind. The split is chosen by `split` (default train).
import { joinRelative, type DatasetPlace } from "../dataset-place.js";
import { ArrowStreamFile } from "./arrow-stream-source.js";
import type { RecordSource, SourceRow } from "./record-source.js";

const SMALL_JSON = 1 << 20;

async function readJson(place: DatasetPlace, relative: string): Promise<unknown> {
  const file = await place.open(relative);
  try {
    if (file.size > SMALL_JSON) throw new Error(`${relative} is larger than ${SMALL_JSON} bytes`);
    const bytes = Buffer.alloc(file.size);
    await file.handle.read(bytes, 0, file.size, 0);
    return JSON.parse(bytes.toString("utf8"));
  } catch (error) {
    throw new Error(`${relative} is not readable JSON: ${(error as Error).message}`);
  } finally {
    await file.handle.close();
  }
}

/** The split folder to read: the folder itself (a Dataset) or one split of a DatasetDict. */
async function splitFolder(place: DatasetPlace, dir: string, split: string | undefined): Promise<{ dir: string; split: string }> {
  const names = new Set(await place.list(dir));
  if (names.has("state.json")) return { dir, split: split ?? "" };
  if (!names.has("dataset_dict.json"))
    throw new Error(
      `is a directory but not a datasets folder: save_to_disk writes state.json (a Dataset) or dataset_dict.json (a DatasetDict); give a .jsonl or .parquet file, or such a folder`,
    );
  const dict = (await readJson(place, joinRelative(dir, "dataset_dict.json"))) as { splits?: unknown };
  const splits = Array.isArray(dict.splits) ? dict.splits.filter((s): s is string => typeof s === "string") : [];
  const wanted = split ?? "train";
  if (!splits.includes(wanted))
    throw new Error(
      `is a DatasetDict with the splits ${splits.map((s) => JSON.stringify(s)).join(", ")}; ${split === undefined ? "it has no train split: " : `it has no split "${split}": `}set dataset.split to one of them (or give the split's folder, DIR/SPLIT)`,
    );
  return { dir: joinRelative(dir, wanted), split: wanted };
}

export async function openDatasetsFolder(place: DatasetPlace, dir: string, split: string | undefined): Promise<RecordSource> {
  const chosen = await splitFolder(place, dir, split);
  const state = (await readJson(place, joinRelative(chosen.dir, "state.json"))) as { _data_files?: unknown };
  const files = Array.isArray(state._data_files) ? state._data_files : [];
  const shards: ArrowStreamFile[] = [];
  try {
    for (const entry of files) {
      const name = (entry as { filename?: unknown }).filename;
      if (typeof name !== "string" || name.includes("/") || name.includes("\\") || name.startsWith("."))
        throw new Error(`state.json lists a data file that is not a plain file name`);
      shards.push(await ArrowStreamFile.open(await place.open(joinRelative(chosen.dir, name)), name));
    }
  } catch (error) {
    await Promise.all(shards.map((s) => s.close()));
    throw error;
  }
  if (shards.length === 0) throw new Error(`state.json lists no data files (_data_files)`);
  return new DatasetsFolderSource(shards, chosen.split);
}

class DatasetsFolderSource implements RecordSource {
  readonly kind: string;
  readonly rows: number;
  readonly bytes: number;
  private readonly firsts: number[] = [];

  constructor(
    private readonly shards: ArrowStreamFile[],
    split: string,
  ) {
    let rows = 0;
    for (const shard of shards) {
      this.firsts.push(rows);
      rows += shard.rows;
    }
    this.rows = rows;
    this.bytes = shards.reduce((sum, shard) => sum + shard.bytes, 0);
    this.kind = `datasets folder${split ? ` (split ${split})` : ""}, ${shards.length} Arrow file${shards.length === 1 ? "" : "s"}`;
  }

  async read(start: number, end: number): Promise<SourceRow[]> {
    end = Math.min(end, this.rows);
    const out: SourceRow[] = [];
    for (let s = 0; s < this.shards.length && start < end; s++) {
      const first = this.firsts[s]!;
      const last = first + this.shards[s]!.rows;
      if (start >= last) continue;
      const records = await this.shards[s]!.read(start - first, Math.min(end, last) - first);
      for (const [i, record] of records.entries()) out.push({ index: start + i, where: `row ${start + i + 1}`, record });
      start = Math.min(end, last);
    }
    return out;
  }

  async close(): Promise<void> {
    await Promise.all(this.shards.map((s) => s.close()));
  }
}
