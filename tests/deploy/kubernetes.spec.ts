// Every kustomize overlay renders with default options (as `kubectl apply -k`, Argo CD
// and Flux render it), every object validates against the Kubernetes OpenAPI schemas
// (kubernetes-models), and the properties the deployment relies on hold.
import { describe, expect, it } from "vitest";
import { execFileSync, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse, parseAllDocuments } from "yaml";
import type { z } from "zod";
import { InferenceConfigSchema } from "@lean-grpo/inference";
import { LearnerConfigSchema } from "@lean-grpo/learner";
import { OrchestratorConfigSchema } from "@lean-grpo/orchestrator";
import { RewardConfigSchema } from "@lean-grpo/reward";
import { VerifierConfigSchema } from "@lean-grpo/verifier";
import { repoRoot } from "../support/interop-verifier.js";

const require = createRequire(import.meta.url);
const kubectl = spawnSync("kubectl", ["version", "--client"], { stdio: "ignore" }).status === 0;
if (!kubectl) console.warn("skipping Kubernetes manifest tests: kubectl (with kustomize) is not installed");

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: any;
}

/** `kubectl kustomize DIR` with default options: what `kubectl apply -k`, Argo CD and Flux do. */
function kustomize(dir: string): string {
  return execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function render(overlay: string): K8sObject[] {
  return parseAllDocuments(kustomize(`${repoRoot}deploy/k8s/overlays/${overlay}`)).map((d) => d.toJSON() as K8sObject);
}

/** The image each Deployment runs (the verifier checks proofs, so it runs the Lean image). */
const IMAGE: Record<string, string> = {
  inference: "lean-grpo/inference",
  verifier: "lean-grpo/lean-verifier",
  reward: "lean-grpo/reward",
  learner: "lean-grpo/learner",
  orchestrator: "lean-grpo/orchestrator",
};
const TAG: Record<string, string> = { dev: "dev", gpu: "0.1.0", "gpu-torchrun": "0.1.0" };
/** Overlays whose learner is the PyTorch one (services/learner-torch). */
const TORCH_LEARNER = new Set(["gpu", "gpu-torchrun"]);
const SCHEMA: Record<string, z.ZodType> = {
  inference: InferenceConfigSchema,
  verifier: VerifierConfigSchema,
  reward: RewardConfigSchema,
  learner: LearnerConfigSchema,
  orchestrator: OrchestratorConfigSchema,
};

/** The kubernetes-models class for an object, e.g. apps/v1 Deployment. */
function modelOf(object: K8sObject): { validate(): void } {
  const group = object.apiVersion.includes("/") ? object.apiVersion : `v1`;
  const module = require(`kubernetes-models/${group}/${object.kind}`);
  const Model = module[object.kind];
  if (typeof Model !== "function") throw new Error(`no model for ${object.apiVersion} ${object.kind}`);
  return new Model(object);
}

const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const named = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);

describe.skipIf(!kubectl).each(["dev", "gpu", "gpu-torchrun"])("Kubernetes overlay %s", (overlay) => {
  const objects = kubectl ? render(overlay) : [];

  it("validates every object against the Kubernetes schemas", () => {
    expect(objects.length).toBeGreaterThan(20);
    for (const object of objects) {
      expect(() => modelOf(object).validate(), `${object.kind}/${object.metadata.name}`).not.toThrow();
    }
  });

  it("has a Deployment per service with native gRPC probes on numeric ports and non-root containers", () => {
    for (const name of ["inference", "verifier", "reward", "learner", "orchestrator"]) {
      const deployment = named(objects, "Deployment", name);
      expect(deployment, name).toBeDefined();
      const pod = deployment!.spec.template.spec;
      const container = pod.containers[0];
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
      for (const probe of ["readinessProbe", "livenessProbe", "startupProbe"]) {
        expect(typeof container[probe].grpc.port, `${name} ${probe}`).toBe("number");
        expect(container[probe].grpc.port).toBe(container.ports[0].containerPort);
      }
      expect(container.readinessProbe.grpc.service).toMatch(/^leangrpo\.v1\./);
      expect(container.resources.requests.memory).toBeDefined();
      expect(container.resources.limits.memory).toBeDefined();
    }
  });

  it("requires the mesh token from the Secret lean-grpo-auth in every service, and mounts no API credentials in any pod", () => {
    for (const name of ["inference", "verifier", "reward", "learner", "orchestrator"]) {
      const container = named(objects, "Deployment", name)!.spec.template.spec.containers[0];
      expect(container.env, name).toContainEqual({
        name: "LEANGRPO_AUTH_TOKEN",
        valueFrom: { secretKeyRef: { name: "lean-grpo-auth", key: "token" } },
      });
    }
    for (const deployment of byKind(objects, "Deployment")) {
      expect(deployment.spec.template.spec.automountServiceAccountToken, deployment.metadata.name).toBe(false);
    }
    // The operator makes the Secret (deploy/README.md); a token in the manifests would be one every cluster shares.
    expect(byKind(objects, "Secret")).toEqual([]);
  });

  it("runs each service from its own image and its own compiled server (the image's entry point is node)", () => {
    for (const name of ["inference", "verifier", "reward", "learner", "orchestrator"]) {
      if (name === "learner" && TORCH_LEARNER.has(overlay)) continue; // its own test below
      const container = named(objects, "Deployment", name)!.spec.template.spec.containers[0];
      expect(container.image, name).toBe(`${IMAGE[name]}:${TAG[overlay]}`);
      expect(container.command, name).toBeUndefined();
      // The image's compiled service (deploy/docker/bundle-service.mjs), built from its src/server.ts.
      expect(container.args, name).toEqual([`services/${name}/dist/server.mjs`, "--config", `/etc/lean-grpo/${name}.yaml`]);
      expect(existsSync(`${repoRoot}services/${name}/src/server.ts`), `services/${name}/src/server.ts`).toBe(true);
      const mount = container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === "/etc/lean-grpo");
      expect(mount?.readOnly, name).toBe(true);
    }
  });

  it("makes the verifier and reward Services headless so callers balance per call", () => {
    expect(named(objects, "Service", "verifier")!.spec.clusterIP).toBe("None");
    expect(named(objects, "Service", "reward")!.spec.clusterIP).toBe("None");
    expect(named(objects, "HorizontalPodAutoscaler", "verifier")!.spec.scaleTargetRef.name).toBe("verifier");
    expect(
      byKind(objects, "PodDisruptionBudget")
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(["reward", "verifier"]);
  });

  it("lets only the orchestrator reach the learner and inference, and gives the verifier no egress", () => {
    const policies = byKind(objects, "NetworkPolicy");
    const sources = (name: string) =>
      policies
        .filter((p) => p.spec.podSelector.matchLabels?.["app.kubernetes.io/name"] === name)
        .flatMap((p) => p.spec.ingress ?? [])
        .flatMap((rule: any) => rule.from.map((f: any) => f.podSelector.matchLabels?.["app.kubernetes.io/name"] ?? "*"));
    expect(sources("learner")).toEqual(["orchestrator"]);
    expect(sources("inference")).toEqual(["orchestrator"]);
    expect(sources("verifier").sort()).toEqual(["orchestrator", "reward"]);
    const verifier = policies.find((p) => p.spec.podSelector.matchLabels?.["app.kubernetes.io/name"] === "verifier")!;
    expect(verifier.spec.policyTypes).toContain("Egress");
    expect(verifier.spec.egress).toEqual([]);
    expect(policies.some((p) => Object.keys(p.spec.podSelector).length === 0 && p.spec.policyTypes.includes("Ingress"))).toBe(true);
  });

  it("mounts the service configs from deploy/k8s/base/config and the OTLP settings", () => {
    const config = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name.startsWith("lean-grpo-config")) as any;
    expect(Object.keys(config.data).sort()).toEqual([
      "inference.yaml",
      ...(TORCH_LEARNER.has(overlay) ? ["learner-torch.json"] : []),
      "learner.yaml",
      "orchestrator.yaml",
      "reward.yaml",
      "verifier.yaml",
    ]);
    for (const [file, text] of Object.entries(config.data)) {
      if (file === "learner-torch.json") continue; // the gpu overlay's file, checked below
      expect(text, file).toBe(readFileSync(`${repoRoot}deploy/k8s/base/config/${file}`, "utf8"));
    }
    const otel = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name.startsWith("lean-grpo-otel")) as any;
    expect(otel.data.OTEL_EXPORTER_OTLP_ENDPOINT).toMatch(/^http:\/\/.+:4318$/);
  });

  if (TORCH_LEARNER.has(overlay)) {
    it("runs the PyTorch learner image on a GPU under the learner's name, with its JSON config", () => {
      const pod = named(objects, "Deployment", "learner")!.spec.template.spec;
      const container = pod.containers[0];
      expect(container.image).toBe(`lean-grpo/learner-torch:${TAG[overlay]}`);
      // The image's entry point runs `$LAUNCHER -m leangrpo_learner serve` on /etc/lean-grpo/learner-torch.json.
      expect(container.command).toBeUndefined();
      expect(container.args).toBeUndefined();
      const ranks = overlay === "gpu-torchrun" ? 4 : 1;
      expect(container.resources.limits["nvidia.com/gpu"]).toBe(ranks);
      const launcher = container.env.find((e: { name: string }) => e.name === "LAUNCHER")?.value;
      expect(launcher).toBe(ranks > 1 ? `python -m torch.distributed.run --standalone --nproc_per_node=${ranks}` : "python");
      expect(pod.tolerations).toContainEqual({ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" });
      expect(container.volumeMounts.map((m: { mountPath: string }) => m.mountPath)).toEqual(
        expect.arrayContaining(["/etc/lean-grpo", "/checkpoints", "/dev/shm"]),
      );
      const config = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name.startsWith("lean-grpo-config")) as any;
      const text = readFileSync(`${repoRoot}deploy/k8s/overlays/gpu/learner-torch.json`, "utf8");
      expect(config.data["learner-torch.json"]).toBe(text);
      // The TS learner's keys (its schema, less the PyTorch learner's own `torch` section), on the probed port.
      const { torch, ...keys } = JSON.parse(text);
      expect(torch.device).toBe("cuda");
      const learner = LearnerConfigSchema.parse(keys);
      expect(learner.server.port).toBe(container.ports[0].containerPort);
      expect(learner.server.host).toBe("0.0.0.0");
      expect(container.volumeMounts.map((m: { mountPath: string }) => m.mountPath)).toContain(learner.checkpoint_dir);
    });
  }

  if (overlay !== "dev") {
    it("adds vLLM with a GPU, runtime LoRA loading and the adapter volume shared with inference", () => {
      const vllm = named(objects, "Deployment", "vllm")!.spec.template.spec;
      expect(vllm.containers[0].resources.limits["nvidia.com/gpu"]).toBe(1);
      expect(vllm.containers[0].args).toContain("--enable-lora");
      expect(vllm.containers[0].env).toContainEqual({ name: "VLLM_ALLOW_RUNTIME_LORA_UPDATING", value: "True" });
      const inference = named(objects, "Deployment", "inference")!.spec.template.spec;
      const claim = (pod: any) => pod.volumes.find((v: any) => v.name === "adapters")?.persistentVolumeClaim?.claimName;
      expect(claim(inference)).toBe("adapters");
      expect(inference.containers[0].env).toEqual(
        expect.arrayContaining([
          { name: "LEANGRPO_INFERENCE_VLLM__URL", value: "http://vllm:8000" },
          { name: "LEANGRPO_INFERENCE_ADAPTERS__DIR", value: "/adapters" },
        ]),
      );
      expect(claim(vllm)).toBe("adapters");
      expect(named(objects, "Deployment", "verifier")!.spec.template.spec.containers[0].resources.limits.memory).toBe("12Gi");
    });
  }
});

describe("deploy/k8s/base/config", () => {
  it.each(Object.keys(SCHEMA))("%s.yaml loads with the service's config schema, on the port its Deployment exposes", (name) => {
    const config = SCHEMA[name]!.parse(parse(readFileSync(`${repoRoot}deploy/k8s/base/config/${name}.yaml`, "utf8"))) as any;
    expect(config.server.host).toBe("0.0.0.0");
    const deployment = parseAllDocuments(readFileSync(`${repoRoot}deploy/k8s/base/${name}.yaml`, "utf8"))
      .map((d) => d.toJSON())
      .find((o) => o.kind === "Deployment");
    expect(config.server.port).toBe(deployment.spec.template.spec.containers[0].ports[0].containerPort);
    // What the service writes goes to its volume: the image's own files are read-only.
    const mounts = deployment.spec.template.spec.containers[0].volumeMounts.map((m: { mountPath: string }) => m.mountPath);
    if (name === "learner") expect(mounts).toContain(config.checkpoint_dir);
    if (name === "orchestrator") expect(mounts).toContain(config.runs_dir);
  });
});

describe.skipIf(!kubectl)("rendering with default options", () => {
  it("refuses a file outside the kustomization's folder, as the configs once were (the check can fail)", () => {
    const work = mkdtempSync(path.join(tmpdir(), "lean-grpo-kustomize-"));
    try {
      mkdirSync(path.join(work, "base"));
      writeFileSync(path.join(work, "outside.yaml"), "server: {}\n");
      writeFileSync(
        path.join(work, "base", "kustomization.yaml"),
        "configMapGenerator:\n  - name: c\n    files:\n      - outside.yaml=../outside.yaml\n",
      );
      expect(() => kustomize(path.join(work, "base"))).toThrow(/security|not in or below/);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!kubectl)("schema validation", () => {
  it("rejects a manifest with a named port in a gRPC probe (the check can fail)", () => {
    const [deployment] = render("dev").filter((o) => o.kind === "Deployment");
    const broken = structuredClone(deployment!);
    broken.spec.template.spec.containers[0].readinessProbe.grpc.port = "grpc";
    expect(() => modelOf(broken).validate()).toThrow(/must be integer/);
  });
});
