// Which reader a dataset path gets, by what the path is (never a flag the user must know):
// a directory is a `datasets` save_to_disk folder, a file whose name ends in .parquet is
// parquet, any other file is JSONL.
import path from "node:path";
import type { DatasetPlace, OpenedDatasetFile } from "../dataset-place.js";
import { openDatasetsFolder } from "./datasets-folder-source.js";
import { openJsonlSource } from "./jsonl-source.js";
import { openParquetSource } from "./parquet-source.js";
import type { RecordSource } from "./record-source.js";

export type { RecordSource, SourceRow } from "./record-source.js";

/** A file that is one JSON array (Lean Workbook's lean_workbook.json) is not JSON Lines: say so, not "line 1: not valid JSON". */
async function refuseJsonArray(file: OpenedDatasetFile, given: string): Promise<void> {
  const head = Buffer.alloc(Math.min(64, file.size));
  await file.handle.read(head, 0, head.length, 0);
  if (head.toString("utf8").trimStart().startsWith("[")) {
    await file.handle.close();
    throw new Error(
      `${given} is one JSON array, not JSON Lines (one object a line): convert it (jq -c '.[]' ${path.basename(given)} > records.jsonl) or use the corpus's parquet`,
    );
  }
}

export async function openRecordSource(place: DatasetPlace, given: string, options: { split?: string } = {}): Promise<RecordSource> {
  if (await place.isDirectory(given)) return openDatasetsFolder(place, given, options.split);
  const file = await place.open(given);
  if (/\.parquet$/i.test(given)) return openParquetSource(file);
  await refuseJsonArray(file, given);
  return openJsonlSource(file);
}
