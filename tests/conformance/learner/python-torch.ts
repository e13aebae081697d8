// Whether this machine can run the PyTorch learner: Debian's /usr/bin/python3 with torch,
// grpcio and protobuf (.ci/run installs python3-torch, python3-grpcio, python3-protobuf).
import { spawnSync } from "node:child_process";

export const PYTHON = "/usr/bin/python3";

/** Why the PyTorch learner cannot run here, or null when it can. */
export function torchUnavailable(modules = "torch, grpc, google.protobuf"): string | null {
  const probe = spawnSync(PYTHON, ["-c", `import ${modules}`], { encoding: "utf8" });
  if (probe.error) return `${PYTHON} cannot be run (${probe.error.message})`;
  if (probe.status !== 0) {
    const why = probe.stderr.trim().split("\n").at(-1);
    return `${PYTHON} -c "import ${modules}" failed: ${why} (apt-get install python3-torch python3-grpcio python3-protobuf)`;
  }
  return null;
}
