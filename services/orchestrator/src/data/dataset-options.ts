// How a dataset's records are read, from the run config's `dataset` section: the corpus
// layout, column overrides, the split of a DatasetDict folder, and the header for Lean records
// that carry none.
import type { FieldMap, LayoutName } from "./dataset-layout.js";

export interface DatasetOptions {
  layout: LayoutName;
  fields: FieldMap;
  /** A DatasetDict folder's split (undefined: train). */
  split?: string;
  /** Header for Lean records without one ("" = none). */
  header: string;
}

/** Records read as they are: layout detected, no overrides, no header added. */
export const AUTO_OPTIONS: DatasetOptions = { layout: "auto", fields: {}, header: "" };

/** The options of a run config's dataset section (run-config.ts). */
export function datasetOptionsOf(dataset: { layout: LayoutName; fields: FieldMap; split: string | null; header: string }): DatasetOptions {
  return {
    layout: dataset.layout,
    fields: dataset.fields,
    header: dataset.header,
    ...(dataset.split !== null ? { split: dataset.split } : {}),
  };
}
