// The page's calls to an orchestrator reading runs from disk (`lean-grpo dashboard --runs-dir`),
// showing only runs whose folder is a real directory: a run folder that is a symlink (one
// planted to point outside the runs directory, or at another tenant's run) is not listed,
// and GetRun and WatchRun refuse it, as /files refuses every symlink.
import { lstat } from "node:fs/promises";
import path from "node:path";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { OrchestratorService } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { isSafeName } from "@lean-grpo/kit";

type OrchestratorImpl = ServiceImpl<typeof OrchestratorService>;
export type ReadOnlyOrchestrator = Pick<OrchestratorImpl, "listRuns" | "getRun" | "watchRun">;

export function realRunFoldersOnly(orchestrator: ReadOnlyOrchestrator, runsDir: string): ReadOnlyOrchestrator {
  /** lstat: a symlink is never a directory here, wherever it points. */
  const isRealFolder = async (id: string) => (await lstat(path.join(runsDir, id)).catch(() => undefined))?.isDirectory() === true;
  const refuseLinked = async (id: string) => {
    // An id that is no safe name is the orchestrator's to refuse (INVALID_ARGUMENT), before any path is made of it.
    if (isSafeName(id) && !(await isRealFolder(id)))
      throw new ConnectError(`run_id "${id}": no run folder of that name (a symlink is not followed)`, Code.NotFound);
  };
  return {
    async listRuns(request, context) {
      const page = await orchestrator.listRuns(request, context);
      const runs = page.runs ?? [];
      const real = await Promise.all(runs.map((run) => isRealFolder(run.id ?? "")));
      return { nextPageToken: page.nextPageToken ?? "", runs: runs.filter((_, i) => real[i]) };
    },
    async getRun(request, context) {
      await refuseLinked(request.runId);
      return orchestrator.getRun(request, context);
    },
    async *watchRun(request, context) {
      await refuseLinked(request.runId);
      yield* orchestrator.watchRun(request, context);
    },
  };
}
