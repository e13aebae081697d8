// services.learner.impl: torch — the section split off the TS learner's schema, the command
// line, and the child process: started, announced, failing with its stderr, stopped.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { splitLearnerSection, startTorchLearner, torchLearnerCommand } from "../../src/mesh/torch-learner-process.js";
import { issueTestCertificate, writeTestCertificate } from "../../../../tests/support/test-certificate.js";

const PYTHON = "/usr/bin/python3";
const hasPython = spawnSync(PYTHON, ["-c", "pass"]).status === 0;
const hasTorch = spawnSync(PYTHON, ["-c", "import torch, grpc, google.protobuf"]).status === 0;
if (!hasTorch) console.warn(`skipping the PyTorch learner process tests: ${PYTHON} lacks torch, grpcio or protobuf`);
const server = { host: "127.0.0.1", port: 0 };

describe("splitLearnerSection", () => {
  it("leaves other services and the default ts learner to the TS schema", () => {
    expect(splitLearnerSection("inference", { impl: "x" })).toEqual({ config: { impl: "x" }, torch: null });
    expect(splitLearnerSection("learner", { lora: { rank: 4 } })).toEqual({ config: { lora: { rank: 4 } }, torch: null });
    expect(splitLearnerSection("learner", { impl: "ts", seed: 3 })).toEqual({ config: { seed: 3 }, torch: null });
  });

  it("takes impl, python, torchrun and torch out of the section for impl: torch", () => {
    const { config, torch } = splitLearnerSection("learner", {
      impl: "torch",
      python: "/opt/venv/bin/python",
      torchrun: { nproc_per_node: 2 },
      torch: { device: "cpu", threads: 1 },
      lora: { rank: 8 },
    });
    expect(config).toEqual({ lora: { rank: 8 } });
    expect(torch).toMatchObject({
      python: "/opt/venv/bin/python",
      torchrun: { nproc_per_node: 2 },
      torchSection: { device: "cpu", threads: 1 },
    });
    expect(splitLearnerSection("learner", { impl: "torch" }).torch).toMatchObject({ python: PYTHON, torchrun: null, torchSection: null });
  });

  it.each([
    [{ impl: "jax" }, 'config key "services.learner.impl": expected one of "ts" | "torch", received string "jax"'],
    [{ python: "/usr/bin/python3" }, "services.learner.python applies only to impl: torch (impl is ts)"],
    [{ impl: "ts", torchrun: { nproc_per_node: 2 } }, "services.learner.torchrun applies only to impl: torch"],
    [
      { impl: "torch", torchrun: { nproc_per_node: 0 } },
      'config key "services.learner.torchrun.nproc_per_node": too small: expected number to be >=1',
    ],
    [
      { impl: "torch", torchrun: { nproc: 2 } },
      'unknown config key "services.learner.torchrun.nproc"; accepted keys under "services.learner.torchrun": nproc_per_node',
    ],
    [{ impl: "torch", python: "" }, 'config key "services.learner.python": too small'],
    [{ impl: "torch", torch: "cuda" }, 'config key "services.learner.torch": expected object, received string "cuda"'],
    [
      { impl: "torch", torch: { dtype: "fp16" } },
      'config key "services.learner.torch.dtype": expected one of "auto" | "float32" | "bfloat16"',
    ],
    [
      { impl: "torch", torch: { devise: "cuda" } },
      'unknown config key "services.learner.torch.devise"; accepted keys under "services.learner.torch": attn_implementation',
    ],
  ])("refuses %j naming the key", (section, message) => {
    expect(() => splitLearnerSection("learner", section)).toThrow(message);
  });
});

describe("torchLearnerCommand", () => {
  it("runs the package's serve command, under torch.distributed.run when ranks are asked for", () => {
    const plain = splitLearnerSection("learner", { impl: "torch" }).torch!;
    const command = torchLearnerCommand({ server }, plain);
    expect(command.slice(0, 8)).toEqual([PYTHON, "-m", "leangrpo_learner", "serve", "--host", "127.0.0.1", "--port", "0"]);
    expect(JSON.parse(command.at(-1)!)).toEqual({ server });
    const ranks = splitLearnerSection("learner", { impl: "torch", torchrun: { nproc_per_node: 2 }, torch: { device: "cpu" } }).torch!;
    const distributed = torchLearnerCommand({ server }, ranks);
    expect(distributed.slice(0, 6)).toEqual([PYTHON, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "-m"]);
    expect(JSON.parse(distributed.at(-1)!)).toEqual({ server, torch: { device: "cpu" } });
  });

  it("keeps the mesh token off the command line, where any local user could read it", () => {
    const plain = splitLearnerSection("learner", { impl: "torch" }).torch!;
    const command = torchLearnerCommand({ server: { ...server, auth: { token: "learner-t0ken" } } }, plain);
    expect(command.join(" ")).not.toContain("learner-t0ken");
    expect(JSON.parse(command.at(-1)!)).toEqual({ server });
  });
});

describe("startTorchLearner", () => {
  it("says the interpreter could not be started", async () => {
    const options = splitLearnerSection("learner", { impl: "torch", python: "/nonexistent/python3" }).torch!;
    await expect(startTorchLearner({ server }, options)).rejects.toThrow(/could not be started: spawn \/nonexistent\/python3 ENOENT/);
  });

  it.skipIf(!hasPython)("reports an exit before listening with the tail of its stderr", async () => {
    const empty = await mkdtemp(path.join(tmpdir(), "no-learner-"));
    try {
      const options = { ...splitLearnerSection("learner", { impl: "torch" }).torch!, packageDir: empty };
      await expect(startTorchLearner({ server }, options)).rejects.toThrow(
        /exited with code 1 before listening; its stderr ended with:\n.*No module named leangrpo_learner/s,
      );
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it.skipIf(!hasTorch)("times out naming the line it waited for", async () => {
    const options = { ...splitLearnerSection("learner", { impl: "torch" }).torch!, startTimeoutMs: 200 };
    await expect(startTorchLearner({ server }, options)).rejects.toThrow(/did not print "listening on <host>:<port>" within 0.2 s/);
  });

  it.skipIf(!hasTorch)(
    "serves LearnerService on the announced port and exits on shutdown",
    async () => {
      const options = splitLearnerSection("learner", { impl: "torch" }).torch!;
      // The mesh's token reaches it through its environment (not its command line), and it requires it.
      const learner = await startTorchLearner({ server: { ...server, auth: { token: "learner-t0ken" } } }, options);
      try {
        expect(learner.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        const client = createClient(LearnerService, createGrpcTransport({ baseUrl: learner.url }));
        const refused = await client.listAlgorithms({}).then(
          () => "answered",
          (e: unknown) => ConnectError.from(e).code,
        );
        expect(refused).toBe(Code.Unauthenticated);
        const answer = await client.listAlgorithms({}, { headers: { authorization: "Bearer learner-t0ken" } });
        expect(answer.algorithms.map((a) => a.name)).toContain("grpo");
      } finally {
        await learner.shutdown();
      }
      expect(() => process.kill(learner.pid, 0), "the process is gone").toThrow();
    },
    120_000,
  );

  it.skipIf(!hasTorch)(
    "passes server.tls on: the learner serves TLS at an https URL that a client trusting the certificate is answered on",
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), "torch-learner-tls-"));
      const { ca, cert, key } = writeTestCertificate(dir, issueTestCertificate(["localhost", "127.0.0.1"]));
      const options = splitLearnerSection("learner", { impl: "torch" }).torch!;
      const learner = await startTorchLearner({ server: { ...server, tls: { cert_file: cert, key_file: key } } }, options);
      try {
        expect(learner.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
        const trusting = createClient(LearnerService, createGrpcTransport({ baseUrl: learner.url, nodeOptions: { ca: readFileSync(ca) } }));
        expect((await trusting.listAlgorithms({})).algorithms.map((a) => a.name)).toContain("grpo");
        const plain = createClient(LearnerService, createGrpcTransport({ baseUrl: learner.url.replace("https:", "http:") }));
        await expect(plain.listAlgorithms({}, { timeoutMs: 3_000 })).rejects.toThrow();
      } finally {
        await learner.shutdown();
        await rm(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
