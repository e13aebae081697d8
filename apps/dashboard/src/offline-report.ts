// report.html: the dashboard page for one run, its data embedded (GetRun's answer and the
// run's WatchRun events as proto JSON), opened from disk with no server and no network:
// its Content-Security-Policy allows no call at all (page-policy.ts).
import { toJson } from "@bufbuild/protobuf";
import {
  GetRunResponseSchema,
  WatchRunResponseSchema,
  type GetRunResponse,
  type WatchRunResponse,
} from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { pageAssets } from "./page-bundle.js";
import { pageHtml } from "./page-html.js";

export interface OfflineRun {
  details: GetRunResponse;
  events: readonly WatchRunResponse[];
}

export async function renderOfflineReport(report: OfflineRun): Promise<string> {
  const run = report.details.run;
  if (!run) throw new Error("a report needs GetRunResponse.run");
  const data = {
    details: toJson(GetRunResponseSchema, report.details),
    events: report.events.map((e) => toJson(WatchRunResponseSchema, e)),
  };
  return pageHtml(await pageAssets(), { title: `lean-grpo run ${run.id} (${run.algorithm})`, data }).html;
}
