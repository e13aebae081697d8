// The orchestrator's data root: dataset_path, eval.data, and Evaluate's adapter and
// checkpoint paths resolve under it (kit/paths), read up to max_dataset_bytes.
import { PathRoot } from "@lean-grpo/kit";
import type { OrchestratorConfig } from "../config.js";
import type { DatasetFiles } from "./load-dataset.js";

export function datasetFiles(config: Pick<OrchestratorConfig, "data_root" | "max_dataset_bytes">): DatasetFiles {
  return { root: new PathRoot({ dir: config.data_root, key: "data_root" }), maxBytes: config.max_dataset_bytes };
}
