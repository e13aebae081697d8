// Where the page's runs come from. Live: OrchestratorService over the Connect protocol
// from the browser (ListRuns, GetRun, WatchRun), served by `lean-grpo dashboard` on the
// page's own origin. Offline (report.html): one run's messages embedded in the page.
// Both hand the page the same generated messages, so it draws a run the same way.
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import {
  GetRunResponseSchema,
  OrchestratorService,
  WatchRunResponseSchema,
  type GetRunResponse,
  type Run,
  type WatchRunResponse,
} from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";

export interface RunSource {
  /** "live" streams from an orchestrator; "offline" is a report with its data inside. */
  readonly kind: "live" | "offline";
  listRuns(): Promise<Run[]>;
  getRun(id: string): Promise<GetRunResponse>;
  /** The run's events from its first step; ends after a final state or when `signal` aborts. */
  watch(id: string, signal: AbortSignal): AsyncIterable<WatchRunResponse>;
}

export function connectSource(baseUrl: string): RunSource {
  const client = createClient(OrchestratorService, createConnectTransport({ baseUrl }));
  return {
    kind: "live",
    async listRuns() {
      const runs: Run[] = [];
      let pageToken = "";
      do {
        const page = await client.listRuns({ pageToken });
        runs.push(...page.runs);
        pageToken = page.nextPageToken;
      } while (pageToken);
      return runs;
    },
    getRun: (id) => client.getRun({ runId: id }),
    watch: (id, signal) => client.watchRun({ runId: id, fromStart: true }, { signal }),
  };
}

/** The data a report embeds: GetRun's answer and the run's events, as proto JSON. */
export interface EmbeddedRun {
  details: JsonValue;
  events: JsonValue[];
}

export function embeddedSource(data: EmbeddedRun): RunSource {
  const details = fromJson(GetRunResponseSchema, data.details);
  const events = data.events.map((e) => fromJson(WatchRunResponseSchema, e));
  const run = details.run;
  if (!run) throw new Error("the embedded report has no run");
  return {
    kind: "offline",
    listRuns: async () => [run],
    async getRun(id) {
      if (id !== run.id) throw new Error(`this report holds run ${run.id}, not ${id}`);
      return details;
    },
    async *watch(id) {
      if (id !== run.id) throw new Error(`this report holds run ${run.id}, not ${id}`);
      yield* events;
    },
  };
}
