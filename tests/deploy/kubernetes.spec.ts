// Every kustomize overlay renders, every object validates against the Kubernetes
// OpenAPI schemas (kubernetes-models), and the properties the deployment relies on hold.
import { describe, expect, it } from "vitest";
import { execFileSync, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { parseAllDocuments } from "yaml";
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

function render(overlay: string): K8sObject[] {
  const out = execFileSync(
    "kubectl",
    ["kustomize", "--load-restrictor", "LoadRestrictionsNone", `${repoRoot}deploy/k8s/overlays/${overlay}`],
    { encoding: "utf8" },
  );
  return parseAllDocuments(out).map((d) => d.toJSON() as K8sObject);
}

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

describe.skipIf(!kubectl).each(["dev", "gpu"])("Kubernetes overlay %s", (overlay) => {
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
      expect(container.args).toEqual(expect.arrayContaining(["serve", name, "--config", `/etc/lean-grpo/${name}.yaml`]));
    }
  });

  it("makes the verifier and reward Services headless so callers balance per call", () => {
    expect(named(objects, "Service", "verifier")!.spec.clusterIP).toBe("None");
    expect(named(objects, "Service", "reward")!.spec.clusterIP).toBe("None");
    expect(named(objects, "HorizontalPodAutoscaler", "verifier")!.spec.scaleTargetRef.name).toBe("verifier");
    expect(byKind(objects, "PodDisruptionBudget").map((p) => p.metadata.name).sort()).toEqual(["reward", "verifier"]);
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

  it("mounts the service configs from configs/deploy and the OTLP settings", () => {
    const config = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name.startsWith("lean-grpo-config"));
    expect(Object.keys((config as any).data).sort()).toEqual([
      "inference.yaml",
      "learner.yaml",
      "orchestrator.yaml",
      "reward.yaml",
      "verifier.yaml",
    ]);
    const otel = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name.startsWith("lean-grpo-otel")) as any;
    expect(otel.data.OTEL_EXPORTER_OTLP_ENDPOINT).toMatch(/^http:\/\/.+:4318$/);
  });

  if (overlay === "gpu") {
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

describe.skipIf(!kubectl)("schema validation", () => {
  it("rejects a manifest with a named port in a gRPC probe (the check can fail)", () => {
    const [deployment] = render("dev").filter((o) => o.kind === "Deployment");
    const broken = structuredClone(deployment!);
    broken.spec.template.spec.containers[0].readinessProbe.grpc.port = "grpc";
    expect(() => modelOf(broken).validate()).toThrow(/must be integer/);
  });
});
