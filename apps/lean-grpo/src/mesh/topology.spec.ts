import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { loadConfig } from "@lean-grpo/kit";
import { OrchestratorConfigSchema } from "@lean-grpo/orchestrator";
import { loadTopology, planTopology } from "./topology.js";

const SHIPPED = fileURLToPath(new URL("../../../../configs/mesh/topology-3-verifiers.yaml", import.meta.url));

describe("configs/mesh/topology-3-verifiers.yaml", () => {
  it("wires the orchestrator to every replica of the services a run drives", () => {
    const replicas = planTopology(loadTopology(SHIPPED));
    const urls = (service: string) => replicas.filter((r) => r.service === service).map((r) => r.url);
    const orchestrator = replicas.find((r) => r.service === "orchestrator")!;
    // The replica's own dotted overrides, as `lean-grpo serve orchestrator` reads them.
    const overrides = orchestrator.args.filter((a) => a.includes("="));
    const config = loadConfig(OrchestratorConfigSchema, { overrides });
    expect(config.services).toEqual({
      inference: urls("inference"),
      reward: urls("reward"),
      learner: urls("learner"),
      verifier: urls("verifier"),
    });
    expect(urls("reward")).toHaveLength(2);
    expect(urls("verifier")).toHaveLength(3);
  });

  it("gives the sampler and the learner the shipped model", () => {
    const args = (service: string) => planTopology(loadTopology(SHIPPED)).find((r) => r.service === service)!.args;
    expect(args("inference")).toContain("embedded.model_dir=models/arith-tiny");
    expect(args("learner")).toContain("model.dir=models/arith-tiny");
  });
});

describe("configs/mesh/topology-scaled.yaml", () => {
  const SCALED = fileURLToPath(new URL("../../../../configs/mesh/topology-scaled.yaml", import.meta.url));

  it("wires the orchestrator to 3 inference, 3 verifier and 2 reward replicas", () => {
    const replicas = planTopology(loadTopology(SCALED));
    const urls = (service: string) => replicas.filter((r) => r.service === service).map((r) => r.url);
    const orchestrator = replicas.find((r) => r.service === "orchestrator")!;
    const config = loadConfig(OrchestratorConfigSchema, { overrides: orchestrator.args.filter((a) => a.includes("=")) });
    expect(config.services.inference).toEqual(urls("inference"));
    expect(config.services.verifier).toEqual(urls("verifier"));
    expect([urls("inference").length, urls("verifier").length, urls("reward").length]).toEqual([3, 3, 2]);
  });

  it("gives each inference replica an adapters.dir of its own (the replica's index in its name), and restarts it", () => {
    const inference = planTopology(loadTopology(SCALED)).filter((r) => r.service === "inference");
    const dirs = inference.map((r) => r.args.find((a) => a.startsWith("adapters.dir=")));
    expect(dirs).toEqual([0, 1, 2].map((i) => `adapters.dir=/tmp/lean-grpo-adapters-${i}`));
    expect(inference.every((r) => r.restart)).toBe(true);
  });
});
