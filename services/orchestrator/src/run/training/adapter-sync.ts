// Moves an adapter version from the learner to every inference replica: ExportAdapter's
// stream is checked and written to runs/<id>/adapters/policy-v<N>/ and relayed, part by
// part, into LoadAdapter on each replica at once (adapter-fleet.ts), so the next step samples
// from the new policy wherever it is balanced to; a replica that joins or restarts later is
// loaded from the run's copy before it samples. The directory is
// made afresh under runs_dir (RunOutputs.freshAdapterDirectory): nothing planted there is
// written through.
import path from "node:path";
import { ADAPTERS_DIR, adapterName, exportAdapterEnvelope, loadAdapterEnvelope, receiveAdapter } from "@lean-grpo/adapter-files";
import type { LoadAdapterRequest } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import type { MeshClients } from "../mesh-clients.js";
import type { RunOutputs } from "../outputs/run-outputs.js";

export interface SyncedAdapter {
  name: string;
  version: number;
  dir: string;
}

/** Syncs `version` (as TrainStep and GetStatus report it; 0 is the learner's latest). */
export async function syncAdapter(
  clients: MeshClients,
  version: bigint,
  outputs: RunOutputs,
  signal?: AbortSignal,
): Promise<SyncedAdapter> {
  let synced: SyncedAdapter | undefined;
  const exported = clients.learner.exportAdapter({ version }, { signal });
  // Named by the version the manifest carries, not by the learner's suggested name.
  const dirOf = (synced: number) => path.join(outputs.adaptersDir, adapterName(synced));

  async function* relay(): AsyncGenerator<LoadAdapterRequest> {
    for await (const part of receiveAdapter(exportAdapterEnvelope, exported, (header) =>
      outputs.freshAdapterDirectory(adapterName(header.version)),
    )) {
      if (part.case === "header") {
        synced = { name: adapterName(part.value.version), version: part.value.version, dir: dirOf(part.value.version) };
        yield loadAdapterEnvelope.header({ version: part.value.version }, part.value.files);
      } else {
        yield loadAdapterEnvelope.chunk(part.value);
      }
    }
  }

  await clients.adapters.loadEverywhere(relay(), signal);
  if (!synced) throw new Error(`ExportAdapter of version ${version} sent no manifest`);
  const { name } = synced;
  clients.adapters.remember(name, synced.version, () => outputs.readAdapter(`${ADAPTERS_DIR}/${name}`));
  return synced;
}
