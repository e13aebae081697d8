// Which reader a dataset path gets, by what the path is (never a flag the user must know):
// a directory is a `datasets` save_to_disk folder, a file whose name ends in .parquet is
// parquet, any other file is JSONL.
import type { DatasetPlace } from "../dataset-place.js";
import { openDatasetsFolder } from "./datasets-folder-source.js";
import { openJsonlSource } from "./jsonl-source.js";
import { openParquetSource } from "./parquet-source.js";
import type { RecordSource } from "./record-source.js";

export type { RecordSource, SourceRow } from "./record-source.js";

export async function openRecordSource(place: DatasetPlace, given: string, options: { split?: string } = {}): Promise<RecordSource> {
  if (await place.isDirectory(given)) return openDatasetsFolder(place, given, options.split);
  const file = await place.open(given);
  if (/\.parquet$/i.test(given)) return openParquetSource(file);
  return openJsonlSource(file);
}
