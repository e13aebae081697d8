// The clients a run uses, and the retry that turns a service that stays down into a
// ServiceLostError naming it. The kit's transport already retries unary UNAVAILABLE
// calls briefly; this covers streams too and waits longer (a restarting process).
import { Code, ConnectError } from "@connectrpc/connect";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { createServiceClient, rpcClientTracing, type ServiceClient } from "@lean-grpo/kit";
import type { OrchestratorConfig } from "../config.js";
import { ServiceLostError } from "./service-lost-error.js";

export interface MeshClients {
  inference: ServiceClient<typeof InferenceService>["client"];
  reward: ServiceClient<typeof RewardService>["client"];
  learner: ServiceClient<typeof LearnerService>["client"];
  /** Runs `call` against `service`, retrying while it is UNAVAILABLE. */
  withRetry<T>(service: "inference" | "reward" | "learner", call: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  close(): void;
}

export function connectMesh(config: OrchestratorConfig): MeshClients {
  const urls = {
    inference: required(config, "inference"),
    reward: required(config, "reward"),
    learner: required(config, "learner"),
  };
  const options = (url: string) => ({ endpoints: [url], interceptors: [rpcClientTracing()], defaultTimeoutMs: config.rpc_deadline_ms, readMaxBytes: 64 << 20, writeMaxBytes: 64 << 20 });
  const inference = createServiceClient(InferenceService, options(urls.inference));
  const reward = createServiceClient(RewardService, options(urls.reward));
  const learner = createServiceClient(LearnerService, options(urls.learner));

  async function withRetry<T>(service: keyof typeof urls, call: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        const unavailable = error instanceof ConnectError && error.code === Code.Unavailable;
        if (!unavailable) throw error;
        if (attempt >= config.service_retries || signal?.aborted) throw new ServiceLostError(service, urls[service], error);
        await new Promise((resolve) => setTimeout(resolve, config.retry_backoff_ms * 2 ** attempt));
      }
    }
  }

  return {
    inference: inference.client,
    reward: reward.client,
    learner: learner.client,
    withRetry,
    close() {
      inference.transport.close();
      reward.transport.close();
      learner.transport.close();
    },
  };
}

function required(config: OrchestratorConfig, service: "inference" | "reward" | "learner"): string {
  const url = config.services[service];
  if (!url) throw new ConnectError(`services.${service} is not set: the orchestrator needs the ${service} service's URL`, Code.FailedPrecondition);
  return url;
}
