// The records a run trains on, by position: the data order (rollout/data-order.ts) picks
// positions, and each step reads only the records of its batch. A set of at most
// WHOLE_RECORDS records and max_dataset_bytes is read and validated whole before the run
// starts and kept in memory (as every set was before streaming); a larger one stays on disk
// and is read batch by batch, so a corpus of millions of records starts as fast as a small
// one and holds only the index of its rows. Validating a record (the Lean screen included)
// costs about a millisecond, so the record bound keeps a whole check to seconds.
import type { Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { SAMPLE_ROWS, openDataset, readWholeDataset, type OpenedDataset } from "./load-dataset.js";
import type { DatasetOptions } from "./dataset-options.js";
import type { DatasetPlace } from "./dataset-place.js";

/** The most records a set may have to be read and validated whole before the run starts. */
export const WHOLE_RECORDS = 20_000;

export interface TrainingSet {
  /** Records the run draws from (max_train_samples applied). */
  readonly size: number;
  /** Validated before the run starts: every record of a set read whole, else a sample (the first records and some spread over the rest). */
  readonly checked: readonly Theorem[];
  /** Whether records are read from disk batch by batch (and validated as they are read). */
  readonly streamed: boolean;
  /** The records at these positions, in the order asked. */
  at(indices: readonly number[]): Promise<Theorem[]>;
  close(): Promise<void>;
}

/** A set held in memory: an inline dataset, or a file small enough to be read whole. */
export function inMemoryTrainingSet(theorems: readonly Theorem[]): TrainingSet {
  return {
    size: theorems.length,
    checked: theorems,
    streamed: false,
    at: async (indices) => indices.map((index) => theorems[index]!),
    close: async () => {},
  };
}

/**
 * Opens the training set `given` in `place`: whole when it is at most `maxBytes` on disk and
 * WHOLE_RECORDS records, streamed above that. Throws DatasetError (naming rows and fields) for what it validated.
 */
export async function openTrainingSet(
  place: DatasetPlace,
  given: string,
  options: DatasetOptions,
  limits: { maxBytes: number; maxTrainSamples: number | null },
): Promise<TrainingSet> {
  const dataset = await openDataset(place, given, options);
  try {
    if (dataset.bytes <= limits.maxBytes && dataset.size <= WHOLE_RECORDS) {
      let theorems = await readWholeDataset(dataset, limits.maxBytes, "dataset_path");
      if (limits.maxTrainSamples !== null) theorems = theorems.slice(0, limits.maxTrainSamples);
      await dataset.close();
      return inMemoryTrainingSet(theorems);
    }
    const size = limits.maxTrainSamples === null ? dataset.size : Math.min(dataset.size, limits.maxTrainSamples);
    if (size === 0) throw new Error(`${given} has no records`);
    return new StreamedTrainingSet(dataset, size, await dataset.sample(size));
  } catch (error) {
    await dataset.close();
    throw error;
  }
}

class StreamedTrainingSet implements TrainingSet {
  readonly streamed = true;
  constructor(
    private readonly dataset: OpenedDataset,
    readonly size: number,
    readonly checked: readonly Theorem[],
  ) {}

  at(indices: readonly number[]): Promise<Theorem[]> {
    return this.dataset.at(indices);
  }

  close(): Promise<void> {
    return this.dataset.close();
  }
}

export { SAMPLE_ROWS };
