// Resuming an async run: the step after the checkpoint was sampled, in the run that
// never stopped, with the adapter of the step before the checkpoint (one step off-policy).
// The learner's checkpoint holds only its latest version, so that adapter is loaded into
// the inference service from the run's own copy (runs/<id>/adapters/policy-v<N>/, written by
// every adapter sync) and the resumed run samples that step exactly as before.
import path from "node:path";
import { ADAPTERS_DIR, adapterName } from "@lean-grpo/adapter-files";
import { PathError } from "@lean-grpo/kit";
import type { MeshClients } from "../mesh-clients.js";
import type { RunOutputs } from "../outputs/run-outputs.js";
import type { AdapterRef } from "../rollout/step-rollouts.js";

/** The adapter in effect after `step` (0: before training, the base model), loaded for sampling. */
export async function adapterAfterStep(clients: MeshClients, outputs: RunOutputs, step: number, signal?: AbortSignal): Promise<AdapterRef> {
  if (step === 0) return { name: "", version: 0 };
  const record = (await outputs.readSteps()).find((r) => r.step === step);
  if (!record)
    throw new Error(
      `resuming an async run needs step ${step}'s line in ${path.join(outputs.dir, "metrics.jsonl")} (the adapter step ${step + 2} sampled with)`,
    );
  if (record.adapter_version === 0) return { name: "", version: 0 };
  return clients.withRetry("inference", () => loadSavedAdapter(clients, outputs, record.adapter_version, signal), signal);
}

async function loadSavedAdapter(clients: MeshClients, outputs: RunOutputs, version: number, signal?: AbortSignal): Promise<AdapterRef> {
  const name = adapterName(version);
  // Read from the run's directory held open under runs_dir: a symlink there is refused, not followed.
  const files = await outputs.readAdapter(`${ADAPTERS_DIR}/${name}`).catch((error: unknown) => {
    if (!(error instanceof PathError) || error.code !== "missing") throw error;
    throw new Error(
      `adapter version ${version} is not in ${outputs.adaptersDir} (no ${name}/); an async run resumes from the adapters it synced (or resume with training.async=false)`,
    );
  });
  // Into every inference replica; one that holds it already counts as loaded.
  const loaded = await clients.adapters.loadFiles(name, version, files, signal);
  if (loaded.some((response) => response.unloaded.includes(name))) {
    throw new Error(
      `the inference service unloaded ${name} as soon as it loaded it: an async run samples with the previous adapter while the next one loads, so the inference service must keep at least 2 adapters (adapters.keep)`,
    );
  }
  return { name, version };
}
