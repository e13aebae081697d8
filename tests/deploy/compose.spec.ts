// deploy/compose.yaml is valid for docker-compose, and wires what the stack needs.
import { describe, expect, it } from "vitest";
import { execFileSync, spawnSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse } from "yaml";
import type { z } from "zod";
import { InferenceConfigSchema } from "@lean-grpo/inference";
import { loadConfig } from "@lean-grpo/kit";
import { LearnerConfigSchema } from "@lean-grpo/learner";
import { OrchestratorConfigSchema } from "@lean-grpo/orchestrator";
import { RewardConfigSchema } from "@lean-grpo/reward";
import { VerifierConfigSchema } from "@lean-grpo/verifier";
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

  it("compose.fleet.yaml: two vLLM servers, each behind an inference replica of its own with its own adapters volume, both called by the orchestrator", () => {
    const fleet = parse(
      execFileSync(
        "docker-compose",
        ["-f", `${repoRoot}deploy/compose.yaml`, "-f", `${repoRoot}deploy/compose.fleet.yaml`, "--profile", "gpu", "config"],
        {
          encoding: "utf8",
          env: withToken,
        },
      ),
    );
    const env = (svc: string) => fleet.services[svc].environment;
    expect(env("inference").LEANGRPO_INFERENCE_VLLM__URL).toBe("http://vllm:8000");
    expect(env("inference-2").LEANGRPO_INFERENCE_VLLM__URL).toBe("http://vllm-2:8000");
    const adapters = (svc: string) => mounts(fleet, svc).find(([, target]) => target === "/adapters")?.[0];
    expect([adapters("inference"), adapters("vllm")]).toEqual(["adapters", "adapters"]);
    expect([adapters("inference-2"), adapters("vllm-2")]).toEqual(["adapters-2", "adapters-2"]);
    expect(fleet.services["vllm-2"].command).toContain("--enable-lora");
    expect(env("vllm-2").VLLM_ALLOW_RUNTIME_LORA_UPDATING).toBe("True");
    expect(env("inference-2").LEANGRPO_AUTH_TOKEN).toBe("compose-test-token");
    // The orchestrator reads the list as its config does: every inference replica.
    const orchestrator = loadConfig(OrchestratorConfigSchema, {
      env: env("orchestrator"),
      envPrefix: "LEANGRPO_ORCHESTRATOR_",
    });
    expect(orchestrator.services.inference).toEqual(["http://inference:50051", "http://inference-2:50051"]);
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
    // The CPU default: every service, the verifier (math answers) included, from its own target.
    for (const svc of ["inference", "verifier", "reward", "learner", "orchestrator"]) {
      expect(dockerfile(svc), svc).toBe("deploy/docker/service.Dockerfile");
      expect(cpu.services[svc].build.target, svc).toBe(svc);
      expect(targets.has(svc), `service.Dockerfile target ${svc}`).toBe(true);
      expect(cpu.services[svc].image, svc).toBe(`lean-grpo/${svc}:dev`);
    }
    for (const svc of ["inference", "verifier", "reward", "learner", "orchestrator"]) {
      expect(cpu.services[svc].build.context.replace(/\/$/, ""), svc).toBe(repoRoot.replace(/\/$/, ""));
      const mount = mounts(cpu, svc).find(([, target]) => target === `/etc/lean-grpo/${svc}.yaml`);
      expect(mount?.[0], svc).toBe(`${repoRoot}deploy/k8s/base/config/${svc}.yaml`);
      expect(existsSync(mount![0]!), svc).toBe(true);
    }
  });

  it("lets the orchestrator reach the verifier (tactic mode) and gives it a data_root with the shipped datasets", () => {
    const cpu = parse(config());
    expect(Object.keys(cpu.services.orchestrator.networks).sort()).toEqual(["default", "no-egress"]);
    const orchestrator = loadConfig(OrchestratorConfigSchema, {
      file: `${repoRoot}deploy/k8s/base/config/orchestrator.yaml`,
      env: {},
      envPrefix: "LEANGRPO_ORCHESTRATOR_",
    });
    expect(orchestrator.data_root).toBe("/data");
    expect(mounts(cpu, "orchestrator").find(([, target]) => target === "/data/examples")?.[0]).toBe(`${repoRoot}examples`);
    // Every service the orchestrator names is on a network it shares with it.
    for (const url of Object.values(orchestrator.services).flat() as string[]) {
      const name = /([a-z-]+):\d+$/.exec(url)![1]!;
      const shared = Object.keys(cpu.services[name].networks ?? { default: null }).filter((n) => n in cpu.services.orchestrator.networks);
      expect(shared, url).not.toEqual([]);
    }
  });

  it("names the shipped model in the inference and learner configs, with the README run's learner settings", () => {
    const inference = loadConfig(InferenceConfigSchema, {
      file: `${repoRoot}deploy/k8s/base/config/inference.yaml`,
      env: {},
      envPrefix: "X_",
    });
    const learner = loadConfig(LearnerConfigSchema, { file: `${repoRoot}deploy/k8s/base/config/learner.yaml`, env: {}, envPrefix: "X_" });
    expect(inference.embedded.model_dir).toBe("/app/models/arith-tiny");
    expect(learner.model.dir).toBe("/app/models/arith-tiny");
    const readme = parse(readFileSync(`${repoRoot}configs/train/arith.yaml`, "utf8")).services.learner;
    expect(learner.lora.target_modules).toEqual(readme.lora.target_modules);
    expect(learner.optimizer.learning_rate).toBe(readme.optimizer.learning_rate);
    expect(learner.micro_batch_tokens).toBe(readme.micro_batch_tokens);
  });

  it("compose.lean.yaml: the Lean verifier image, with what bubblewrap needs in options the engine accepts", () => {
    const lean = parse(
      execFileSync("docker-compose", ["-f", `${repoRoot}deploy/compose.yaml`, "-f", `${repoRoot}deploy/compose.lean.yaml`, "config"], {
        encoding: "utf8",
        env: withToken,
      }),
    );
    const verifier = lean.services.verifier;
    expect(verifier.build.dockerfile.replace(/^.*\/deploy\//, "deploy/")).toBe("deploy/docker/lean-verifier.Dockerfile");
    expect(verifier.image).toBe("lean-grpo/lean-verifier:dev");
    // systempaths=unconfined is a docker CLI option the engine refuses from compose.
    for (const spec of Object.values(lean.services) as { security_opt?: string[] }[]) {
      for (const option of spec.security_opt ?? []) expect(option).not.toMatch(/systempaths/);
    }
    expect(verifier.security_opt.sort()).toEqual(["apparmor=unconfined", "seccomp=unconfined"]);
    // Root only for the entry point, which lifts /proc's masks and then drops to 65532 with no capabilities.
    expect(verifier.user).toBe("0:0");
    expect(verifier.cap_drop).toEqual(["ALL"]);
    expect(verifier.cap_add.sort()).toEqual(["SETGID", "SETUID", "SYS_ADMIN"]);
    const dockerfile = parseDockerfile(readFileSync(`${repoRoot}deploy/docker/lean-verifier.Dockerfile`, "utf8")).at(-1)!;
    expect(dockerfile.instructions.find((i) => i.keyword === "ENTRYPOINT")?.args).toBe('["/bin/sh", "/usr/local/bin/unmask-proc", "node"]');
    expect(readFileSync(`${repoRoot}deploy/docker/unmask-proc.sh`, "utf8")).toContain(
      "exec setpriv --reuid 65532 --regid 65532 --clear-groups --inh-caps=-all --bounding-set=-all",
    );
  });

  it("is rejected by docker-compose when broken (the check can fail)", () => {
    const broken = spawnSync("docker-compose", ["-f", "-", "config", "-q"], {
      input: "services:\n  x:\n    image: a\n    ports: 5\n",
      encoding: "utf8",
    });
    expect(broken.status).not.toBe(0);
  });
});

// TLS inside the compose mesh (deploy/compose.tls.yaml over compose.yaml): each service's config as
// it reads it (its mounted file, then its environment) serves TLS from deploy/tls and refuses plain
// text, the callers dial https:// for names make-tls-secret.sh's certificate holds, Node trusts the
// CA, and the health checks speak TLS on each service's own port and name.
describe.skipIf(!compose)("deploy/compose.tls.yaml", () => {
  const withToken = { ...process.env, LEANGRPO_AUTH_TOKEN: "compose-test-token" };
  const stack = compose
    ? parse(
        execFileSync(
          "docker-compose",
          ["-f", `${repoRoot}deploy/compose.yaml`, "-f", `${repoRoot}deploy/compose.tls.yaml`, "--profile", "gpu", "config"],
          { encoding: "utf8", env: withToken },
        ),
      )
    : undefined;
  const PORTS: Record<string, number> = { inference: 50051, verifier: 50052, reward: 50053, learner: 50054, orchestrator: 50055 };
  const SCHEMAS: Record<string, z.ZodType> = {
    inference: InferenceConfigSchema,
    verifier: VerifierConfigSchema,
    reward: RewardConfigSchema,
    learner: LearnerConfigSchema,
    orchestrator: OrchestratorConfigSchema,
  };
  const tlsDir = `${repoRoot}deploy/tls`;
  /** What a service mounts read-only at /etc/lean-grpo-tls ("source:target:ro", or an object, by docker-compose version). */
  const readOnlyMount = (svc: string) => {
    const volume = (stack.services[svc].volumes ?? []).find((v: any) =>
      typeof v === "string" ? v.split(":")[1] === "/etc/lean-grpo-tls" : v.target === "/etc/lean-grpo-tls",
    );
    const readOnly = typeof volume === "string" ? volume.split(":")[2] === "ro" : volume?.read_only === true;
    return readOnly ? (typeof volume === "string" ? volume.split(":")[0] : volume.source) : undefined;
  };
  const configOf = (svc: string): any => {
    const file = mounts(stack, svc).find(([, target]) => target === `/etc/lean-grpo/${svc}.yaml`)![0]!;
    const env = stack.services[svc].environment as Record<string, string>;
    return loadConfig(SCHEMAS[svc]!, { file, env, envPrefix: `LEANGRPO_${svc.toUpperCase()}_` });
  };

  it("serves TLS in every service from deploy/tls, refuses plain text, and trusts the CA in every Node process", () => {
    for (const svc of Object.keys(PORTS)) {
      const { server } = configOf(svc);
      expect(server.allow_plaintext, svc).toBe(false);
      expect(server.tls, svc).toEqual({ cert_file: "/etc/lean-grpo-tls/tls.crt", key_file: "/etc/lean-grpo-tls/tls.key" });
      expect(readOnlyMount(svc), svc).toBe(tlsDir);
      expect(stack.services[svc].environment.NODE_EXTRA_CA_CERTS, svc).toBe("/etc/lean-grpo-tls/ca.crt");
    }
    // The PyTorch learner reads its JSON alone: the TLS one.
    const json = mounts(stack, "learner-torch").find(([, target]) => target === "/etc/lean-grpo/learner-torch.json")![0]!;
    const { torch: _device, ...keys } = JSON.parse(readFileSync(json, "utf8"));
    const torchServer = LearnerConfigSchema.parse(keys).server;
    expect(torchServer.allow_plaintext).toBe(false);
    expect(torchServer.tls).toEqual({ cert_file: "/etc/lean-grpo-tls/tls.crt", key_file: "/etc/lean-grpo-tls/tls.key" });
    expect(readOnlyMount("learner-torch")).toBe(tlsDir);
  });

  it("dials every service at https:// (dns+https:/// where it scales), for a name the script's certificate holds", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "compose-tls-"));
    try {
      execFileSync("sh", [`${repoRoot}deploy/k8s/make-tls-secret.sh`, "--dir", dir, "--files-only", "--name", "learner-torch"], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      const certificate = new X509Certificate(readFileSync(path.join(dir, "tls.crt")));
      const urls = [...Object.values(configOf("orchestrator").services).flat(), configOf("reward").verifier.url] as string[];
      expect(urls).toHaveLength(5);
      for (const url of urls) {
        const match = /^(?:https:\/\/|dns\+https:\/\/\/)([a-z-]+):(\d+)$/.exec(url);
        expect(match, url).not.toBeNull();
        expect(stack.services[match![1]!], url).toBeDefined();
        expect(Number(match![2]), url).toBe(PORTS[match![1]!]);
        expect(certificate.checkHost(match![1]!), url).toBe(match![1]);
      }
      expect(certificate.checkHost("learner-torch")).toBe("learner-torch");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("health-checks every service over TLS, for its own name, with the probe its image carries", () => {
    for (const [svc, port] of [...Object.entries(PORTS), ["learner-torch", 50054] as const]) {
      const test: string[] = stack.services[svc].healthcheck.test;
      expect(test[0], svc).toBe("CMD");
      expect(test, svc).toContain(`https://127.0.0.1:${port}`);
      expect(test[test.indexOf("--server-name") + 1], svc).toBe(svc);
      expect(test[test.indexOf("--ca") + 1], svc).toBe("/etc/lean-grpo-tls/ca.crt");
      const program =
        svc === "learner-torch"
          ? ["python", "-m", "leangrpo_learner.health_probe"]
          : ["/nodejs/bin/node", `services/${svc}/dist/health-probe.mjs`];
      expect(test.slice(1, 1 + program.length), svc).toEqual(program);
    }
  });
});
