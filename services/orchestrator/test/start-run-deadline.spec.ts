// StartRun's checks carry a deadline and the caller's cancellation: a service that never
// answers (held, or a socket that accepts and stays silent, as when packets are dropped)
// fails the StartRun within start_deadline_ms naming the service, a caller that gives up
// stops the checks, and in every case the next StartRun is not refused as "being prepared".
import { mkdtempSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { LearnerService } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { StartRunRequestSchema } from "@lean-grpo/gen/leangrpo/v1/orchestrator_pb";
import { serve, serviceRegistration, type RunningServer } from "@lean-grpo/kit";
import { OrchestratorConfigSchema } from "../src/config.js";
import { RunManager } from "../src/run/run-manager.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

/** A learner whose ListAlgorithms (StartRun's first call to the mesh) never answers; counts its calls. */
async function heldLearner() {
  let calls = 0;
  const server: RunningServer = await serve({
    name: "held-learner",
    services: [
      serviceRegistration(LearnerService, {
        async listAlgorithms(_request, ctx) {
          calls++;
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
          throw new ConnectError("released", Code.Aborted);
        },
      }),
    ],
    config: { shutdown: { drain_delay_ms: 0, grace_period_ms: 200 } },
  });
  cleanups.push(() => server.shutdown());
  return { url: server.url, calls: () => calls };
}

/** A TCP port that accepts connections and never says a byte: an HTTP/2 peer that cannot be reached. */
async function silentPort(): Promise<string> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return `http://127.0.0.1:${address.port}`;
}

function manager(learnerUrl: string, startDeadlineMs: number) {
  const config = OrchestratorConfigSchema.parse({
    runs_dir: mkdtempSync(path.join(tmpdir(), "start-run-deadline-")),
    services: { inference: learnerUrl, reward: learnerUrl, learner: learnerUrl },
    service_retries: 0,
    start_deadline_ms: startDeadlineMs,
  });
  return new RunManager(config);
}

const request = (runId: string) =>
  create(StartRunRequestSchema, {
    runId,
    theorems: [{ id: "t1", statement: "theorem t1 : 1 + 1 = 2" }],
    config: { training: { steps: 2, batch_size: 1, num_generations: 2 } },
  });

async function timed(promise: Promise<unknown>): Promise<{ error: ConnectError; ms: number }> {
  const started = performance.now();
  const error = await promise.then(
    () => {
      throw new Error("StartRun was accepted");
    },
    (e: unknown) => ConnectError.from(e),
  );
  return { error, ms: performance.now() - started };
}

describe("StartRun's checks are bounded", () => {
  it("a learner that never answers fails the StartRun within start_deadline_ms, naming it, and frees the slot", async () => {
    const learner = await heldLearner();
    const runs = manager(learner.url, 500);
    const first = await timed(runs.start(request("a")));
    expect(first.error.code).toBe(Code.DeadlineExceeded);
    expect(first.error.rawMessage).toContain(`could not reach the learner service at ${learner.url}`);
    expect(first.error.rawMessage).toContain("start_deadline_ms (500 ms)");
    // Generous for a loaded machine; without the bound it would wait for rpc_deadline_ms (10 minutes).
    expect(first.ms).toBeLessThan(10_000);
    // The next StartRun gets its own checks (the learner is asked again), not "being prepared".
    const second = await timed(runs.start(request("b")));
    expect(second.error.rawMessage).not.toContain("being prepared");
    expect(second.error.rawMessage).toContain("could not reach the learner service");
    expect(learner.calls()).toBe(2);
  });

  it("a service whose socket accepts and stays silent is named within the deadline", async () => {
    const url = await silentPort();
    const runs = manager(url, 500);
    const { error, ms } = await timed(runs.start(request("a")));
    expect(error.code).toBe(Code.DeadlineExceeded);
    // Every service is that socket: the first the checks call is named (the served model's prompt format, from inference).
    expect(error.rawMessage).toMatch(new RegExp(`could not reach the (inference|learner) service at ${url}`));
    expect(ms).toBeLessThan(10_000);
  });

  it("a caller that cancels stops the checks at once and the next StartRun is taken", async () => {
    const learner = await heldLearner();
    const runs = manager(learner.url, 600_000);
    const caller = new AbortController();
    const pending = timed(runs.start(request("a"), caller.signal));
    await expect.poll(() => learner.calls(), { timeout: 10_000 }).toBe(1);
    caller.abort();
    const { error, ms } = await pending;
    expect(error.code).toBe(Code.Canceled);
    expect(error.rawMessage).toContain("cancelled by its caller while checking the learner service");
    expect(ms).toBeLessThan(10_000);
    // The slot is free: a second StartRun reaches the learner instead of being refused.
    const next = new AbortController();
    const second = timed(runs.start(request("b"), next.signal));
    await expect.poll(() => learner.calls(), { timeout: 10_000 }).toBe(2);
    next.abort();
    expect((await second).error.code).toBe(Code.Canceled);
  });
});
