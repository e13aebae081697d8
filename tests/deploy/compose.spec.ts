// deploy/compose.yaml is valid for docker-compose, and wires what the stack needs.
import { describe, expect, it } from "vitest";
import { execFileSync, spawnSync } from "node:child_process";
import { parse } from "yaml";
import { repoRoot } from "../support/interop-verifier.js";

const compose = spawnSync("docker-compose", ["version"], { stdio: "ignore" }).status === 0;
if (!compose) console.warn("skipping compose validation: docker-compose is not installed (apt-get install docker-compose)");

describe.skipIf(!compose)("deploy/compose.yaml", () => {
  const config = (...args: string[]) =>
    execFileSync("docker-compose", ["-f", `${repoRoot}deploy/compose.yaml`, ...args, "config"], { encoding: "utf8" });

  it("validates, with vLLM only in the gpu profile", () => {
    const stack = parse(config());
    expect(Object.keys(stack.services).sort()).toEqual(
      ["inference", "jaeger", "learner", "orchestrator", "otel-collector", "reward", "verifier", "vllm"],
    );
    expect(stack.services.vllm.profiles).toEqual(["gpu"]);
    for (const svc of ["inference", "verifier", "reward", "learner", "orchestrator"]) {
      expect(stack.services[svc].profiles, svc).toBeUndefined();
    }
    expect(parse(config("--profile", "gpu")).services.vllm).toBeDefined();
  });

  it("runs vLLM with runtime LoRA on the adapter volume the inference service writes", () => {
    const gpu = parse(config("--profile", "gpu"));
    expect(gpu.services.vllm.command).toContain("--enable-lora");
    expect(gpu.services.vllm.environment.VLLM_ALLOW_RUNTIME_LORA_UPDATING).toBe("True");
    // docker-compose prints volumes as "source:target:mode" or as objects, by version.
    const mount = (svc: string) =>
      gpu.services[svc].volumes
        .map((v: string | { source: string; target: string }) => (typeof v === "string" ? v.split(":") : [v.source, v.target]))
        .find(([source]: string[]) => source === "adapters")?.[1];
    expect(mount("vllm")).toBe("/adapters");
    expect(mount("inference")).toBe("/adapters");
  });

  it("keeps the verifier on an internal network only, and exports traces to the collector", () => {
    const cpu = parse(config());
    expect(Object.keys(cpu.services.verifier.networks)).toEqual(["no-egress"]);
    expect(cpu.networks["no-egress"].internal).toBe(true);
    for (const svc of ["inference", "reward", "learner", "orchestrator"]) {
      expect(cpu.services[svc].environment.OTEL_EXPORTER_OTLP_ENDPOINT).toBe("http://otel-collector:4318");
    }
  });

  it("is rejected by docker-compose when broken (the check can fail)", () => {
    const broken = spawnSync("docker-compose", ["-f", "-", "config", "-q"], {
      input: "services:\n  x:\n    image: a\n    ports: 5\n",
      encoding: "utf8",
    });
    expect(broken.status).not.toBe(0);
  });
});
