// The clients a run uses, and the retry that turns a service that stays down into a
// ServiceLostError naming it. The kit's transport already retries unary UNAVAILABLE
// calls briefly; this covers streams too and waits longer (a restarting process).
import { Code, ConnectError } from "@connectrpc/connect";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { LeanVerifierService } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { callerAuth, clientTarget, createServiceClient, envAuthToken, rpcClientTracing, type ServiceClient } from "@lean-grpo/kit";
import type { OrchestratorConfig } from "../config.js";
import { AdapterFleet } from "./adapter-fleet.js";
import { ServiceLostError } from "./service-lost-error.js";
import { boundClient, type StartCallBounds } from "./start-call-bounds.js";

export interface MeshClients {
  /** Balanced over the inference replicas; a replica lacking a remembered adapter is brought to it first (adapters). */
  inference: ServiceClient<typeof InferenceService>["client"];
  /** The run's adapters in every inference replica. */
  adapters: AdapterFleet;
  reward: ServiceClient<typeof RewardService>["client"];
  learner: ServiceClient<typeof LearnerService>["client"];
  /** Tactic mode's StartProof / ApplyTactic / EndProof; undefined when services.verifier is not set. */
  verifier: ServiceClient<typeof LeanVerifierService>["client"] | undefined;
  /** Runs `call` against `service`, retrying while it is UNAVAILABLE. */
  withRetry<T>(service: MeshService, call: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  close(): void;
}

export type MeshService = "inference" | "reward" | "learner" | "verifier";

/** `bounds`: StartRun's checks, each call within the start deadline and the caller's signal. */
export function connectMesh(config: OrchestratorConfig, bounds?: StartCallBounds): MeshClients {
  const urls: Record<MeshService, string | string[]> = {
    inference: required(config, "inference"),
    reward: required(config, "reward"),
    learner: required(config, "learner"),
    // Only tactic mode calls the verifier directly (the reward service verifies whole proofs).
    verifier: config.services.verifier ?? "",
  };
  const options = (url: string | string[]) => ({
    ...clientTarget(url),
    interceptors: [rpcClientTracing(), ...callerAuth(config.services.token ?? envAuthToken())],
    defaultTimeoutMs: bounds ? bounds.deadlineMs : config.rpc_deadline_ms,
    readMaxBytes: 64 << 20,
    writeMaxBytes: 64 << 20,
  });
  let adapters: AdapterFleet | undefined;
  const inference = createServiceClient(InferenceService, {
    ...options(urls.inference),
    recover: (error, replica, signal) => adapters?.recover(error, replica, signal) ?? Promise.resolve(false),
  });
  adapters = new AdapterFleet(inference);
  const reward = createServiceClient(RewardService, options(urls.reward));
  const learner = createServiceClient(LearnerService, options(urls.learner));
  const verifier = urls.verifier ? createServiceClient(LeanVerifierService, options(urls.verifier)) : undefined;

  async function withRetry<T>(service: MeshService, call: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        const unavailable = error instanceof ConnectError && error.code === Code.Unavailable;
        if (!unavailable) throw error;
        if (attempt >= config.service_retries || signal?.aborted)
          throw new ServiceLostError(service, [urls[service]].flat().join(", "), error);
        await new Promise((resolve) => setTimeout(resolve, config.retry_backoff_ms * 2 ** attempt));
      }
    }
  }

  const bind = <C extends object>(client: C, service: MeshService): C =>
    bounds ? boundClient(client, service, [urls[service]].flat().join(", "), bounds) : client;
  return {
    inference: bind(inference.client, "inference"),
    adapters,
    reward: bind(reward.client, "reward"),
    learner: bind(learner.client, "learner"),
    verifier: verifier && bind(verifier.client, "verifier"),
    withRetry,
    close() {
      inference.transport.close();
      reward.transport.close();
      learner.transport.close();
      verifier?.transport.close();
    },
  };
}

function required(config: OrchestratorConfig, service: "inference" | "reward" | "learner"): string | string[] {
  const url = config.services[service];
  if (!url)
    throw new ConnectError(`services.${service} is not set: the orchestrator needs the ${service} service's URL`, Code.FailedPrecondition);
  return url;
}
