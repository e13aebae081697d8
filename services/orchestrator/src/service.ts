// OrchestratorService: the handler, mountable in-process (embedded mode, tests) or served by src/server.ts.
import { Code, ConnectError } from "@connectrpc/connect";
import type { ServiceRegistration } from "@lean-grpo/kit";
import { OrchestratorService } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import type { OrchestratorConfig } from "./config.js";
import { RunManager } from "./run/run-manager.js";
import type { ReportRenderer } from "./run/outputs/run-report.js";
import { evaluateRpc } from "./eval/evaluate-rpc.js";

const DEFAULT_PAGE = 50;

/** The registration plus its RunManager, so an embedding process can wait for or stop runs. */
export function createOrchestratorService(
  config: OrchestratorConfig,
  options: { renderReport?: ReportRenderer } = {},
): ServiceRegistration<typeof OrchestratorService> & { runs: RunManager } {
  const runs = new RunManager(config, options.renderReport);
  return {
    service: OrchestratorService,
    runs,
    impl: {
      async startRun(request, ctx) {
        const run = await runs.start(request, ctx.signal);
        return { run, config: runs.resolvedConfig(run.id) };
      },
      watchRun(request, ctx) {
        if (!request.runId) throw new ConnectError("run_id is required", Code.InvalidArgument);
        return runs.watch(request.runId, request.fromStart, ctx.signal);
      },
      async stopRun(request) {
        return { run: runs.stop(request.runId) };
      },
      async getRun(request) {
        return runs.details(request.runId);
      },
      async listRuns(request) {
        const offset = request.pageToken ? Number(request.pageToken) : 0;
        if (!Number.isInteger(offset) || offset < 0)
          throw new ConnectError(`page_token "${request.pageToken}" is not one this server issued`, Code.InvalidArgument);
        const size = request.pageSize || DEFAULT_PAGE;
        const all = await runs.list();
        const page = all.slice(offset, offset + size);
        return { runs: page, nextPageToken: offset + size < all.length ? String(offset + size) : "" };
      },
      evaluate(request, ctx) {
        return evaluateRpc(config, request, ctx.signal);
      },
    },
  };
}
