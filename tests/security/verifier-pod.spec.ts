// The verifier's Kubernetes pod gives the code it runs nothing to take: no
// service-account token mounted, and what bubblewrap needs to sandbox each worker.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../support/interop-verifier.js";

const objects = parseAllDocuments(readFileSync(`${repoRoot}deploy/k8s/base/verifier.yaml`, "utf8")).map(
  (document) => document.toJSON() as { kind: string; spec?: any },
);
const pod = objects.find((object) => object.kind === "Deployment")!.spec.template.spec;

describe("the verifier's pod", () => {
  it("mounts no service-account token", () => {
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it("runs in its own user namespace, with what bubblewrap needs and nothing more", () => {
    expect(pod.hostUsers).toBe(false);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    const container = pod.containers.find((c: { name: string }) => c.name === "verifier");
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
      procMount: "Unmasked",
    });
    expect(container.securityContext.privileged).toBeUndefined();
  });
});
