// Every kustomize overlay renders with default options (as `kubectl apply -k`, Argo CD
// and Flux render it), every object validates against the Kubernetes OpenAPI schemas
// (kubernetes-models), and the properties the deployment relies on hold.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { createRequire } from "node:module";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse, parseAllDocuments } from "yaml";
import type { z } from "zod";
import pino from "pino";
import { build } from "esbuild";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { LeanVerifierService } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { OrchestratorService } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { loadConfig, requireSafeExposure, serve, serviceRegistration } from "@lean-grpo/kit";
import { InferenceConfigSchema } from "@lean-grpo/inference";
import { LearnerConfigSchema } from "@lean-grpo/learner";
import { OrchestratorConfigSchema } from "@lean-grpo/orchestrator";
import { RewardConfigSchema } from "@lean-grpo/reward";
import { VerifierConfigSchema } from "@lean-grpo/verifier";
import { repoRoot } from "../support/interop-verifier.js";
import { execForm, inherited, parseDockerfile } from "./dockerfile.js";

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
const TAG: Record<string, string> = { dev: "dev", gpu: "0.1.0", "gpu-torchrun": "0.1.0", tls: "0.1.0", "gpu-tls": "0.1.0" };
/** Overlays whose learner is the PyTorch one (services/learner-torch). */
const TORCH_LEARNER = new Set(["gpu", "gpu-torchrun", "gpu-tls"]);
/** Overlays with vLLM on a GPU. */
const GPU = new Set(["gpu", "gpu-torchrun", "gpu-tls"]);
/** Overlays whose services speak TLS (deploy/k8s/components/tls): their probes are exec probes, checked below. */
const TLS = new Set(["tls", "gpu-tls"]);
/** The PyTorch learner's config file in an overlay's ConfigMap (the tls component's has server.tls). */
const TORCH_CONFIG: Record<string, string> = {
  gpu: "deploy/k8s/overlays/gpu/learner-torch.json",
  "gpu-torchrun": "deploy/k8s/overlays/gpu/learner-torch.json",
  "gpu-tls": "deploy/k8s/components/tls-learner-torch/learner-torch.json",
};
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

const PROBES = ["readinessProbe", "livenessProbe", "startupProbe"] as const;
/** Kinds that live in no namespace. */
const CLUSTER_SCOPED = new Set(["Namespace"]);

const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const named = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);

describe.skipIf(!kubectl).each(["dev", "gpu", "gpu-torchrun", "tls", "gpu-tls"])("Kubernetes overlay %s", (overlay) => {
  const objects = kubectl ? render(overlay) : [];

  it("validates every object against the Kubernetes schemas", () => {
    expect(objects.length).toBeGreaterThan(20);
    for (const object of objects) {
      expect(() => modelOf(object).validate(), `${object.kind}/${object.metadata.name}`).not.toThrow();
    }
  });

  it("has a Deployment per service with gRPC health probes (native ones on numeric ports, exec ones over TLS) and non-root containers", () => {
    for (const name of ["inference", "verifier", "reward", "learner", "orchestrator"]) {
      const deployment = named(objects, "Deployment", name);
      expect(deployment, name).toBeDefined();
      const pod = deployment!.spec.template.spec;
      const container = pod.containers[0];
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
      if (TLS.has(overlay)) {
        // The native grpc probe speaks plain text only: exec probes over TLS (checked in "TLS inside the mesh").
        for (const probe of PROBES) expect(Object.keys(container[probe]), `${name} ${probe}`).toContain("exec");
      } else {
        for (const probe of PROBES) {
          expect(typeof container[probe].grpc.port, `${name} ${probe}`).toBe("number");
          expect(container[probe].grpc.port).toBe(container.ports[0].containerPort);
        }
        expect(container.readinessProbe.grpc.service).toMatch(/^leangrpo\.v1\./);
      }
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
      if (file === "learner-torch.json") continue; // the PyTorch learner's file, checked below
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
      const text = readFileSync(`${repoRoot}${TORCH_CONFIG[overlay]}`, "utf8");
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

  it("gives no container a variable twice (the later one would silently win) and puts every object in the overlay's namespace", () => {
    for (const deployment of byKind(objects, "Deployment")) {
      for (const container of deployment.spec.template.spec.containers) {
        const names = (container.env ?? []).map((e: { name: string }) => e.name);
        expect(
          names.filter((n: string, i: number) => names.indexOf(n) !== i),
          `${deployment.metadata.name}: ${names}`,
        ).toEqual([]);
      }
    }
    const namespace = named(objects, "Namespace", overlay === "dev" ? "lean-grpo-dev" : "lean-grpo");
    expect(namespace).toBeDefined();
    for (const object of objects.filter((o) => !CLUSTER_SCOPED.has(o.kind))) {
      expect(object.metadata.namespace, `${object.kind}/${object.metadata.name}`).toBe(namespace!.metadata.name);
    }
  });

  if (GPU.has(overlay)) {
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

// TLS inside the mesh (deploy/k8s/components/tls): what each service runs with once the ConfigMap
// and its container's variables are read as the service reads them, whom it dials, what it trusts,
// and probes that work with no plain text anywhere. Rendered as shipped (overlays tls, gpu-tls) and
// as the docs compose the component with the other overlays.
const TLS_RENDERS: Record<string, () => K8sObject[]> = {
  tls: () => render("tls"),
  "gpu-tls": () => render("gpu-tls"),
  "dev + tls": () => composed("overlays/dev", ["components/tls"]),
  "gpu-torchrun + tls": () => composed("overlays/gpu-torchrun", ["components/tls", "components/tls-learner-torch"]),
};
const SERVICE_NAME: Record<string, string> = {
  inference: "leangrpo.v1.InferenceService",
  verifier: "leangrpo.v1.LeanVerifierService",
  reward: "leangrpo.v1.RewardService",
  learner: "leangrpo.v1.LearnerService",
  orchestrator: "leangrpo.v1.OrchestratorService",
};

/** An overlay of `base` plus `components`, written where the docs tell an operator to write one. */
function composed(base: string, components: string[]): K8sObject[] {
  const dir = mkdtempSync(path.join(tmpdir(), "lean-grpo-compose-"));
  try {
    const rel = (p: string) => path.relative(dir, `${repoRoot}deploy/k8s/${p}`);
    writeFileSync(
      path.join(dir, "kustomization.yaml"),
      [
        "apiVersion: kustomize.config.k8s.io/v1beta1",
        "kind: Kustomization",
        `resources: [${rel(base)}]`,
        `components: [${components.map(rel).join(", ")}]`,
      ].join("\n"),
    );
    return parseAllDocuments(kustomize(dir)).map((d) => d.toJSON() as K8sObject);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface ServiceWiring {
  name: string;
  container: any;
  pod: any;
  /** The service's config as it reads it: the ConfigMap's file, then its container's variables. */
  config: any;
  torch: boolean;
}

/** Every service's container and the config it runs with. */
function wiring(objects: K8sObject[]): ServiceWiring[] {
  const configMap = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name.startsWith("lean-grpo-config")) as any;
  const dir = mkdtempSync(path.join(tmpdir(), "lean-grpo-config-"));
  try {
    return Object.keys(SCHEMA).map((name) => {
      const pod = named(objects, "Deployment", name)!.spec.template.spec;
      const container = pod.containers[0];
      const torch = container.image.startsWith("lean-grpo/learner-torch:");
      if (torch) {
        // The PyTorch learner reads learner-torch.json and nothing else: the TS learner's keys plus `torch`.
        const { torch: _device, ...keys } = JSON.parse(configMap.data["learner-torch.json"]);
        return { name, container, pod, config: LearnerConfigSchema.parse(keys), torch };
      }
      const file = path.join(dir, `${name}.yaml`);
      writeFileSync(file, configMap.data[`${name}.yaml`]);
      const env = Object.fromEntries(
        (container.env ?? []).filter((e: any) => e.value !== undefined).map((e: any) => [e.name, e.value as string]),
      );
      const config = loadConfig(SCHEMA[name]!, { file, env, envPrefix: `LEANGRPO_${name.toUpperCase()}_` });
      return { name, container, pod, config, torch };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The Secret volume a file path lies in, with its mount. */
function secretOf(service: ServiceWiring, file: string) {
  const mount = service.container.volumeMounts.find((m: any) => file.startsWith(`${m.mountPath}/`));
  const volume = service.pod.volumes.find((v: any) => v.name === mount?.name);
  return { mount, secret: volume?.secret, key: mount ? file.slice(mount.mountPath.length + 1) : undefined };
}

/** Every URL a service dials inside the mesh: the orchestrator's services, the reward service's verifier. */
function dialled(service: ServiceWiring): string[] {
  if (service.name === "orchestrator") return Object.values(service.config.services).flat() as string[];
  if (service.name === "reward") return [service.config.verifier.url].flat();
  return [];
}

const scriptCertificates = new Map<string, X509Certificate>();
afterAll(() => scriptCertificates.clear());

/** The server certificate deploy/k8s/make-tls-secret.sh makes for a namespace (files only: no cluster here). */
function scriptCertificate(namespace: string): X509Certificate {
  let certificate = scriptCertificates.get(namespace);
  if (!certificate) {
    const dir = mkdtempSync(path.join(tmpdir(), "lean-grpo-tls-"));
    try {
      execFileSync("sh", [`${repoRoot}deploy/k8s/make-tls-secret.sh`, "--namespace", namespace, "--dir", dir, "--files-only"], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      certificate = new X509Certificate(readFileSync(path.join(dir, "tls.crt")));
      scriptCertificates.set(namespace, certificate);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return certificate;
}

/** The arguments after a flag in a command line. */
const flagValue = (command: string[], flag: string) => command[command.indexOf(flag) + 1];

describe.skipIf(!kubectl).each(Object.keys(TLS_RENDERS))("TLS inside the mesh: %s", (overlay) => {
  const objects = kubectl ? TLS_RENDERS[overlay]!() : [];
  const services = kubectl ? wiring(objects) : [];
  let certificate: X509Certificate;

  beforeAll(() => {
    certificate = scriptCertificate(objects.find((o) => o.kind === "Namespace")!.metadata.name);
  });

  it("serves TLS in every service with the Secret lean-grpo-tls, mounted read-only for the service's group, and never plain text", () => {
    for (const service of services) {
      const { server } = service.config;
      expect(server.host, service.name).toBe("0.0.0.0");
      expect(server.allow_plaintext, service.name).toBe(false);
      expect(server.tls, service.name).toBeDefined();
      for (const [file, key] of [
        [server.tls.cert_file, "tls.crt"],
        [server.tls.key_file, "tls.key"],
      ]) {
        const { mount, secret, key: mountedKey } = secretOf(service, file);
        expect(secret?.secretName, `${service.name} ${file}`).toBe("lean-grpo-tls");
        expect(mountedKey).toBe(key);
        expect(mount.readOnly).toBe(true);
        expect(secret.defaultMode, "0440: the key readable by the service's group (fsGroup) only").toBe(0o440);
      }
      // What the service itself checks at start: beyond loopback, a token and TLS.
      expect(() => requireSafeExposure({ ...server, auth: { token: "from lean-grpo-auth" } }), service.name).not.toThrow();
    }
    // The operator makes the Secret (make-tls-secret.sh or cert-manager): no key in the manifests.
    expect(byKind(objects, "Secret")).toEqual([]);
  });

  it("dials every service inside the mesh at https:// (dns+https:/// for the headless Services), for a name the certificate holds", () => {
    const urls = services.flatMap(dialled);
    expect(urls.length).toBe(5); // inference, reward, learner, verifier (orchestrator); verifier (reward)
    for (const url of urls) {
      const match = /^(?:https:\/\/|dns\+https:\/\/\/)([a-z0-9-]+):(\d+)$/.exec(url);
      expect(match, `${url}: not TLS`).not.toBeNull();
      const [, host, port] = match!;
      const target = named(objects, "Service", host!);
      expect(target, url).toBeDefined();
      expect(target!.spec.ports[0].port).toBe(Number(port));
      // Per-call balancing over every replica needs the headless Service's addresses.
      if (url.startsWith("dns+https:")) expect(target!.spec.clusterIP, url).toBe("None");
      expect(certificate.checkHost(host!), `the certificate does not name ${host}`).toBe(host);
    }
  });

  it("trusts the Secret's ca.crt in every Node process of the mesh", () => {
    for (const service of services.filter((s) => !s.torch)) {
      const ca = service.container.env.find((e: any) => e.name === "NODE_EXTRA_CA_CERTS")?.value;
      expect(ca, service.name).toBeDefined();
      const { secret, key } = secretOf(service, ca);
      expect(secret?.secretName).toBe("lean-grpo-tls");
      expect(key).toBe("ca.crt");
    }
  });

  it("probes every service over TLS with the image's own health probe, checking the certificate for the Service's name", () => {
    for (const service of services) {
      const port = service.container.ports[0].containerPort;
      for (const probe of PROBES) {
        const spec = service.container[probe];
        // exec alone: grpc, httpGet and tcpSocket probes would speak plain text or nothing the service answers.
        expect(
          Object.keys(spec).filter((k) => ["exec", "grpc", "httpGet", "tcpSocket"].includes(k)),
          `${service.name} ${probe}`,
        ).toEqual(["exec"]);
        expect(spec.timeoutSeconds, "longer than the probe's own 3 s deadline").toBeGreaterThan(3);
        const command: string[] = spec.exec.command;
        expect(command, `${service.name} ${probe}`).toContain(`https://127.0.0.1:${port}`);
        expect(flagValue(command, "--server-name")).toBe(service.name);
        const ca = secretOf(service, flagValue(command, "--ca")!);
        expect(ca.secret?.secretName).toBe("lean-grpo-tls");
        expect(ca.key).toBe("ca.crt");
        // Readiness asks about the service itself, so a draining pod leaves the endpoints first.
        if (probe === "readinessProbe") expect(command).toContain(SERVICE_NAME[service.name]);
        else expect(command).not.toContain(SERVICE_NAME[service.name]);
        expect(command.slice(0, 2), `${service.name}: what its image carries`).toEqual(imageProbe(service));
      }
    }
  });

  it("collects its probes, run below", () => {
    for (const service of services) {
      for (const probe of PROBES) {
        const command: string[] = service.container[probe].exec.command;
        PROBE_COMMANDS.set(command.join(" "), command);
      }
    }
  });
});

/** Every distinct probe command of the TLS renders above. */
const PROBE_COMMANDS = new Map<string, string[]>();

describe.skipIf(!kubectl)("the TLS renders' probes, run", () => {
  let dir: string;
  let compiledProbe: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "lean-grpo-probes-"));
    execFileSync("sh", [`${repoRoot}deploy/k8s/make-tls-secret.sh`, "--dir", dir, "--files-only"], { stdio: ["ignore", "ignore", "pipe"] });
    compiledProbe = await compileHealthProbe();
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (compiledProbe) rmSync(compiledProbe, { force: true });
  });

  it("answer SERVING against a service with the script's certificate, and fail for a name it does not hold", async () => {
    // Readiness and liveness (startup runs liveness's command) of the five TS services and of the PyTorch learner.
    expect(PROBE_COMMANDS.size).toBe(2 * 5 + 2);
    const server = await serve({
      name: "probe-target",
      services: Object.values(SERVICE_DESC).map((desc) => serviceRegistration(desc, {})),
      config: {
        tls: { cert_file: path.join(dir, "tls.crt"), key_file: path.join(dir, "tls.key") },
        shutdown: { drain_delay_ms: 0, grace_period_ms: 1_000 },
      },
      logger: pino({ level: "silent" }),
    });
    try {
      const commands = [...PROBE_COMMANDS.values()].map((command) => localProbe(command, server.port, dir, compiledProbe));
      const wrongName = commands[0]!.map((arg, i, all) => (all[i - 1] === "--server-name" ? "vllm" : arg));
      const results = await Promise.all([...commands, wrongName].map((command) => run(command)));
      for (const [i, result] of results.slice(0, -1).entries()) {
        expect(result, [...PROBE_COMMANDS.keys()][i]).toMatchObject({ code: 0, stdout: "SERVING\n" });
      }
      expect(results.at(-1)!.code, "a probe for a name the certificate does not hold").toBe(1);
      expect(results.at(-1)!.stderr).toMatch(/altnames/);
    } finally {
      await server.shutdown();
    }
  }, 60_000);
});

/**
 * The kit's health probe compiled as the images compile it (deploy/docker/bundle-service.mjs:
 * workspaces bundled, npm packages left as imports), beside node_modules so those resolve.
 */
async function compileHealthProbe(): Promise<string> {
  const outfile = `${repoRoot}node_modules/.cache/lean-grpo-tests/health-probe-${process.pid}.mjs`;
  await build({
    absWorkingDir: repoRoot,
    entryPoints: [`${repoRoot}packages/kit/src/bin/health-probe.ts`],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    plugins: [
      {
        name: "npm-packages-external",
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) =>
            args.path.startsWith("@lean-grpo/") || path.isAbsolute(args.path) ? undefined : { path: args.path, external: true },
          );
        },
      },
    ],
  });
  return outfile;
}

const SERVICE_DESC = { InferenceService, LeanVerifierService, RewardService, LearnerService, OrchestratorService };

/** The probe's program and script as the service's image has them (its HEALTHCHECK and WORKDIR). */
function imageProbe(service: ServiceWiring): string[] {
  if (service.torch) {
    // The PyTorch image: python with the learner's package on PYTHONPATH=/app.
    const text = readFileSync(`${repoRoot}deploy/docker/learner-torch.Dockerfile`, "utf8");
    expect(text).toMatch(/PYTHONPATH=\/app\b/);
    expect(text).toContain("COPY services/learner-torch/leangrpo_learner /app/leangrpo_learner");
    expect(existsSync(`${repoRoot}services/learner-torch/leangrpo_learner/health_probe.py`)).toBe(true);
    return ["python", "-m"];
  }
  const [file, target] = service.name === "verifier" ? ["lean-verifier.Dockerfile", undefined] : ["service.Dockerfile", service.name];
  const stages = parseDockerfile(readFileSync(`${repoRoot}deploy/docker/${file}`, "utf8"));
  const stage = target ?? stages.at(-1)!.name;
  const [node, script] = execForm(inherited(stages, stage, "HEALTHCHECK") ?? "") ?? [];
  return [node!, path.posix.join(inherited(stages, stage, "WORKDIR") ?? "/", script!)];
}

/** A probe's command as it runs here: the probe compiled here, the certificate's folder, the test server's port. */
function localProbe(command: string[], port: number, certDir: string, compiledProbe: string): string[] {
  const args = command
    .slice(command[0] === "python" ? 3 : 2)
    .map((arg) =>
      arg.replace(/^https:\/\/127\.0\.0\.1:\d+$/, `https://127.0.0.1:${port}`).replace(/^\/etc\/lean-grpo-tls\//, `${certDir}/`),
    );
  return command[0] === "python" ? ["/usr/bin/python3", "-m", command[2]!, ...args] : [process.execPath, compiledProbe, ...args];
}

function run(command: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command[0]!, command.slice(1), { cwd: `${repoRoot}services/learner-torch`, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
