// deploy/compose.yaml is valid for docker-compose, and wires what the stack needs.
import { describe, expect, it } from "vitest";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { parse } from "yaml";
import { repoRoot } from "../support/interop-verifier.js";
import { parseDockerfile } from "./dockerfile.js";

const compose = spawnSync("docker-compose", ["version"], { stdio: "ignore" }).status === 0;
if (!compose) console.warn("skipping compose validation: docker-compose is not installed (apt-get install docker-compose)");

/** [source, target] of a service's volumes; docker-compose prints "source:target:mode" or objects, by version. */
function mounts(stack: any, svc: string): string[][] {
  return (stack.services[svc].volumes ?? []).map((v: string | { source: string; target: string }) =>
    typeof v === "string" ? v.split(":") : [v.source, v.target],
  );
}

describe.skipIf(!compose)("deploy/compose.yaml", () => {
  // Compose refuses to start without the mesh's token; any value renders the stack.
  const withToken = { ...process.env, LEANGRPO_AUTH_TOKEN: "compose-test-token" };
  const config = (...args: string[]) =>
    execFileSync("docker-compose", ["-f", `${repoRoot}deploy/compose.yaml`, ...args, "config"], { encoding: "utf8", env: withToken });

  it("requires LEANGRPO_AUTH_TOKEN, gives it to every service, and publishes ports on 127.0.0.1 only", () => {
    const { LEANGRPO_AUTH_TOKEN: _unset, ...without } = process.env;
    const refused = spawnSync("docker-compose", ["-f", `${repoRoot}deploy/compose.yaml`, "config", "-q"], {
      encoding: "utf8",
      env: without,
    });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain("set LEANGRPO_AUTH_TOKEN");
    const gpu = parse(config("--profile", "gpu"));
    for (const svc of ["inference", "verifier", "reward", "learner", "orchestrator", "learner-torch"]) {
      expect(gpu.services[svc].environment.LEANGRPO_AUTH_TOKEN, svc).toBe("compose-test-token");
    }
    for (const [svc, spec] of Object.entries(gpu.services) as [string, { ports?: (string | { host_ip?: string })[] }][]) {
      for (const port of spec.ports ?? []) {
        const hostIp = typeof port === "string" ? port.split(":")[0] : port.host_ip;
        expect(hostIp, `${svc} publishes ${JSON.stringify(port)}`).toBe("127.0.0.1");
      }
    }
  });

  it("validates, with vLLM only in the gpu profile", () => {
    const stack = parse(config());
    expect(Object.keys(stack.services).sort()).toEqual([
      "inference",
      "jaeger",
      "learner",
      "learner-torch",
      "orchestrator",
      "otel-collector",
      "reward",
      "verifier",
      "vllm",
    ]);
    expect(stack.services.vllm.profiles).toEqual(["gpu"]);
    expect(stack.services["learner-torch"].profiles).toEqual(["gpu"]);
    for (const svc of ["inference", "verifier", "reward", "learner", "orchestrator"]) {
      expect(stack.services[svc].profiles, svc).toBeUndefined();
    }
    expect(parse(config("--profile", "gpu")).services.vllm).toBeDefined();
  });

  it("runs vLLM with runtime LoRA on the adapter volume the inference service writes", () => {
    const gpu = parse(config("--profile", "gpu"));
    expect(gpu.services.vllm.command).toContain("--enable-lora");
    expect(gpu.services.vllm.environment.VLLM_ALLOW_RUNTIME_LORA_UPDATING).toBe("True");
    const mount = (svc: string) => mounts(gpu, svc).find(([source]) => source === "adapters")?.[1];
    expect(mount("vllm")).toBe("/adapters");
    expect(mount("inference")).toBe("/adapters");
  });

  it("runs the PyTorch learner on a GPU from its own image, non-root, with its JSON config and the checkpoint volume", () => {
    const gpu = parse(config("--profile", "gpu"));
    const torch = gpu.services["learner-torch"];
    expect(torch.build.dockerfile.replace(/^.*\/deploy\//, "deploy/")).toBe("deploy/docker/learner-torch.Dockerfile");
    expect(torch.image).toBe("lean-grpo/learner-torch:dev");
    expect(torch.deploy.resources.reservations.devices).toEqual([{ driver: "nvidia", count: 1, capabilities: ["gpu"] }]);
    const mount = mounts(gpu, "learner-torch").find(([, target]) => target === "/etc/lean-grpo/learner-torch.json");
    expect(mount?.[0]).toBe(`${repoRoot}deploy/k8s/overlays/gpu/learner-torch.json`);
    expect(mounts(gpu, "learner-torch").find(([source]) => source === "checkpoints")?.[1]).toBe("/checkpoints");
    expect(torch.environment.LAUNCHER).toBe("python");
    const dockerfile = readFileSync(`${repoRoot}deploy/docker/learner-torch.Dockerfile`, "utf8");
    // A CUDA PyTorch base, pinned; grpcio and protobuf come from pip there.
    expect(dockerfile).toMatch(/^ARG PYTORCH_IMAGE=pytorch\/pytorch:[\d.]+-cuda[\d.]+-cudnn\d+-runtime$/m);
    const last = parseDockerfile(dockerfile).at(-1)!;
    expect(last.base).toBe(["$", "{PYTORCH_IMAGE}"].join("")); // the ARG above, as written
    expect(last.instructions.find((i) => i.keyword === "RUN")?.args).toMatch(/pip install .*grpcio.*protobuf/);
    expect(last.instructions.find((i) => i.keyword === "USER")?.args).toBe("65532:65532");
    expect(last.instructions.some((i) => i.keyword === "HEALTHCHECK" && i.args.includes("grpc.health.v1.Health/Check"))).toBe(true);
    expect(last.instructions.find((i) => i.keyword === "ENTRYPOINT")?.args).toMatch(/\$LAUNCHER -m leangrpo_learner serve --config-json/);
  });

  it("keeps the verifier on an internal network only, and exports traces to the collector", () => {
    const cpu = parse(config());
    expect(Object.keys(cpu.services.verifier.networks)).toEqual(["no-egress"]);
    expect(cpu.networks["no-egress"].internal).toBe(true);
    for (const svc of ["inference", "reward", "learner", "orchestrator"]) {
      expect(cpu.services[svc].environment.OTEL_EXPORTER_OTLP_ENDPOINT).toBe("http://otel-collector:4318");
    }
  });

  it("builds one image per service, from its own target, with its config mounted where the image reads it", () => {
    const cpu = parse(config());
    const dockerfile = (svc: string) => cpu.services[svc].build.dockerfile.replace(/^.*\/deploy\//, "deploy/");
    const targets = new Set(parseDockerfile(readFileSync(`${repoRoot}deploy/docker/service.Dockerfile`, "utf8")).map((s) => s.name));
    for (const svc of ["inference", "reward", "learner", "orchestrator"]) {
      expect(dockerfile(svc), svc).toBe("deploy/docker/service.Dockerfile");
      expect(cpu.services[svc].build.target, svc).toBe(svc);
      expect(targets.has(svc), `service.Dockerfile target ${svc}`).toBe(true);
      expect(cpu.services[svc].image, svc).toBe(`lean-grpo/${svc}:dev`);
    }
    // The verifier that checks proofs: Lean, Mathlib and the REPL under the same service.
    expect(dockerfile("verifier")).toBe("deploy/docker/lean-verifier.Dockerfile");
    expect(cpu.services.verifier.build.target).toBeUndefined();
    expect(cpu.services.verifier.image).toBe("lean-grpo/lean-verifier:dev");
    for (const svc of ["inference", "verifier", "reward", "learner", "orchestrator"]) {
      expect(cpu.services[svc].build.context.replace(/\/$/, ""), svc).toBe(repoRoot.replace(/\/$/, ""));
      const mount = mounts(cpu, svc).find(([, target]) => target === `/etc/lean-grpo/${svc}.yaml`);
      expect(mount?.[0], svc).toBe(`${repoRoot}deploy/k8s/base/config/${svc}.yaml`);
      expect(existsSync(mount![0]!), svc).toBe(true);
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
