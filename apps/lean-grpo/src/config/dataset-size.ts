// How many records a training set has, read as the orchestrator reads it (JSONL, parquet, a
// `datasets` folder and its split), for the settings that count passes over the data (seed
// epochs). A count of JSONL lines would count a parquet file's bytes as records.
import { AUTO_DATASET_OPTIONS, localDatasetPlace, openDataset } from "@lean-grpo/orchestrator";

/** The dataset's records, capped by max_train_samples; the reader's error when it cannot be opened. */
export async function datasetSize(dataset: { path: string; split?: unknown; max_train_samples?: unknown }): Promise<number | Error> {
  if (!dataset.path) return new Error("no dataset was given");
  const split = typeof dataset.split === "string" ? { split: dataset.split } : {};
  try {
    const opened = await openDataset(localDatasetPlace(), dataset.path, { ...AUTO_DATASET_OPTIONS, ...split });
    const size = opened.size;
    await opened.close();
    return typeof dataset.max_train_samples === "number" ? Math.min(size, dataset.max_train_samples) : size;
  } catch (error) {
    return error as Error;
  }
}
