// LearnerService: the handler, mountable in-process (embedded mode, tests) or served by src/server.ts.
import type { ServiceRegistration } from "@lean-grpo/kit";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import type { LearnerConfig } from "./config.js";
import { loadCheckpoint, saveCheckpoint } from "./rpc/checkpoints.js";
import { computeLogprobs } from "./rpc/compute-logprobs.js";
import { learnerErrors } from "./rpc/connect-errors.js";
import { exportAdapter } from "./rpc/export-adapter.js";
import { LearnerHost } from "./rpc/learner-host.js";
import { listAlgorithms } from "./rpc/list-algorithms.js";
import { getStatus } from "./rpc/status.js";
import { trainStep } from "./rpc/train-step.js";

/** The LearnerService registration. The model loads on the first RPC that needs it. */
export function createLearnerService(config: LearnerConfig): ServiceRegistration<typeof LearnerService> {
  const host = new LearnerHost(config);
  return {
    service: LearnerService,
    errors: learnerErrors,
    impl: {
      trainStep: (requests, ctx) => trainStep(host, requests, ctx),
      computeLogprobs: (request, ctx) => computeLogprobs(host, request, ctx),
      exportAdapter: (request, ctx) => exportAdapter(host, request, ctx),
      saveCheckpoint: (request) => saveCheckpoint(host, request),
      loadCheckpoint: (request) => loadCheckpoint(host, request),
      getStatus: async () => getStatus(host),
      listAlgorithms: async () => listAlgorithms(),
    },
  };
}
