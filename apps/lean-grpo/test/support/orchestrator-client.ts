// An OrchestratorService client over a started mesh, and watching a run to its end: what
// the run-level tests (resume, async, tactic) share.
import { OrchestratorService, type Run } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { createServiceClient } from "@lean-grpo/kit";
import type { RunningMesh } from "../../src/mesh/start-mesh.js";

export type OrchestratorClient = ReturnType<typeof createServiceClient<typeof OrchestratorService>>["client"];

/** Runs `body` with a client of the mesh's orchestrator, then shuts the mesh down. */
export async function withMesh<T>(mesh: RunningMesh, body: (client: OrchestratorClient) => Promise<T>): Promise<T> {
  const { client, transport } = createServiceClient(OrchestratorService, { endpoints: [mesh.urls.orchestrator!] });
  try {
    return await body(client);
  } finally {
    transport.close();
    await mesh.shutdown();
  }
}

/** Watches a run to its final state; `onStep` may act on the run as step events arrive. */
export async function watchToEnd(client: OrchestratorClient, runId: string, onStep: (step: number) => unknown = () => {}): Promise<Run> {
  let final: Run | undefined;
  for await (const event of client.watchRun({ runId, fromStart: false })) {
    if (event.event.case === "step") await onStep(Number(event.event.value.step));
    if (event.event.case === "stateChange") final = event.event.value;
  }
  return final!;
}
