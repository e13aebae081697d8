// The PyTorch learner's own tests (services/learner-torch/tests, pytest), so that `npm test`
// covers them. Skipped, saying why, where /usr/bin/python3 lacks torch, grpcio, protobuf or pytest.
import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./conformance-fixtures.js";
import { PYTHON, torchUnavailable } from "./python-torch.js";

const unavailable = torchUnavailable("torch, grpc, google.protobuf, pytest");
if (unavailable) console.warn(`skipping the PyTorch learner's pytest: ${unavailable}`);

describe.skipIf(unavailable !== null)("services/learner-torch pytest", () => {
  it("passes", async () => {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      execFile(
        PYTHON,
        ["-m", "pytest", "services/learner-torch/tests", "-q", "-p", "no:cacheprovider"],
        { cwd: REPO_ROOT, maxBuffer: 64 << 20, timeout: 600_000, env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" } },
        (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, output: `${stdout}${stderr}` }),
      );
    });
    // pytest's summary line says how many passed and which failed.
    expect(code, output.split("\n").slice(-40).join("\n")).toBe(0);
    expect(output).toMatch(/\d+ passed/);
  }, 660_000);
});
