// Faults of the REPL process: a timeout, a crash mid-response, garbage, stderr
// output, memory over the cap, a full queue, a cancelled call. After each, the pool
// serves the next request, and every request gets an answer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { standIn, type StandIn } from "./support/stand-in.js";
import { rejection, startVerifier, type Harness } from "./support/verifier-harness.js";

const theorem = { name: "t", statement: "theorem t : 1 + 1 = 2", imports: ["Mathlib"] };

const repl: StandIn = standIn({
  rules: [
    { when: { cmd: { includes: "by norm_num" } }, declares: { axioms: ["propext"] } },
    { when: { cmd: { includes: "by hang" } }, fault: { kind: "hang" } },
    { when: { cmd: { includes: "by slow" } }, declares: { axioms: [] }, fault: { kind: "slow", ms: 600 } },
    { when: { cmd: { includes: "by crash" } }, reply: { transcript: "calc", response: 0 }, fault: { kind: "crash" } },
    { when: { cmd: { includes: "by garbage" } }, fault: { kind: "garbage" } },
    {
      when: { cmd: { includes: "by panic" } },
      declares: { axioms: [] },
      fault: { kind: "stderr", text: "PANIC at Lean.Expr.bindingBody!" },
    },
    // Goes over the cap while still working: killed mid-request.
    {
      when: { cmd: { includes: "by balloon" } },
      declares: { axioms: [] },
      fault: [
        { kind: "grow", mb: 200 },
        { kind: "slow", ms: 5000 },
      ],
    },
  ],
});

let harness: Harness;
beforeAll(async () => {
  harness = await startVerifier({
    repl: { command: repl.command, pool_size: 1, queue_capacity: 2, timeout_ms: 800, memory_limit_mb: 180, memory_sample_ms: 100 },
  });
});
afterAll(async () => {
  await harness.close();
  repl.cleanup();
});

const verify = (proof: string, options: { timeoutMs?: number } = {}) => harness.client.verify({ theorem, proof }, options);

async function restarts(): Promise<Record<string, bigint>> {
  return (await harness.client.poolStats({})).restarts;
}

async function workerPid(): Promise<number> {
  // The worker restarts asynchronously; wait until it has a process again.
  for (;;) {
    const stats = await harness.client.poolStats({});
    const pid = stats.workerStats[0]!.pid;
    if (pid !== 0) return pid;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function expectServing(): Promise<void> {
  expect((await verify("by norm_num")).verdict).toBe(Verdict.PROVED);
}

describe("REPL faults", () => {
  it("a runaway proof answers TIMEOUT, its worker is killed and replaced", async () => {
    await expectServing();
    const pid = await workerPid();
    const response = await verify("by hang");
    expect(response.verdict).toBe(Verdict.TIMEOUT);
    expect(response.reason).toBe("Lean ran past its time limit of 800 ms; the worker was restarted");
    expect(response.timings!.leanMs).toBeGreaterThanOrEqual(790);
    // Served by the replacement process.
    await expectServing();
    expect(await workerPid()).not.toBe(pid);
    expect((await restarts()).timeout).toBe(1n);
  });

  it("a REPL that dies mid-response answers CRASHED", async () => {
    const response = await verify("by crash");
    expect(response.verdict).toBe(Verdict.CRASHED);
    expect(response.reason).toBe("the REPL exited (code 1) in the middle of a response");
    await expectServing();
    expect((await restarts()).crash).toBe(1n);
  });

  it("garbage on stdout answers CRASHED", async () => {
    const response = await verify("by garbage");
    expect(response.verdict).toBe(Verdict.CRASHED);
    expect(response.reason).toMatch(/^the REPL answered with invalid JSON: .*PANIC: stand-in garbage/);
    await expectServing();
    expect((await restarts()).crash).toBe(2n);
  });

  it("output on stderr (a Lean panic) answers CRASHED", async () => {
    const response = await verify("by panic");
    expect(response.verdict).toBe(Verdict.CRASHED);
    expect(response.reason).toBe("the REPL wrote to stderr: PANIC at Lean.Expr.bindingBody!");
    await expectServing();
    expect((await restarts()).crash).toBe(3n);
  });

  it("a worker that goes over its memory cap mid-request is killed: CRASHED, naming the cap", async () => {
    const response = await verify("by balloon");
    expect(response.verdict).toBe(Verdict.CRASHED);
    expect(response.reason).toMatch(/^the worker's resident memory \d+ MB exceeded its cap of 180 MB \(repl.memory_limit_mb\)$/);
    await expectServing();
    expect((await restarts()).memory).toBe(1n);
  });

  it("a call past its deadline is cancelled in the worker (killed and respawned)", async () => {
    const pid = await workerPid();
    const error = await rejection(verify("by slow", { timeoutMs: 300 }));
    expect(error.code).toBe(Code.DeadlineExceeded);
    await expectServing();
    expect((await restarts()).cancel).toBe(1n);
    expect(await workerPid()).not.toBe(pid);
  });

  it("a call whose deadline passes while it waits in the queue leaves without touching a worker", async () => {
    const before = await restarts();
    const sent = repl.requests().length;
    const running = verify("by slow");
    await new Promise((resolve) => setTimeout(resolve, 100));
    const waiting = await rejection(harness.client.verify({ theorem, proof: "by norm_num" }, { timeoutMs: 200 }));
    expect(waiting.code).toBe(Code.DeadlineExceeded);
    expect((await running).verdict).toBe(Verdict.PROVED);
    expect(await restarts()).toEqual(before);
    // Only the slow request's proof and its #print axioms reached the REPL.
    expect(
      repl
        .requests()
        .slice(sent)
        .map((logged) => logged.request.kind === "command" && logged.request.cmd.slice(0, 13)),
    ).toEqual(["theorem t : 1", "#print axioms"]);
  });

  it("a full queue answers RESOURCE_EXHAUSTED; the queued and running requests still complete", async () => {
    // One worker and room for two waiting: the fourth request finds the queue full.
    const running = verify("by slow");
    await new Promise((resolve) => setTimeout(resolve, 100));
    const waiting = [verify("by norm_num"), verify("by norm_num")];
    const rejected = await rejection(verify("by norm_num"));
    expect(rejected.code).toBe(Code.ResourceExhausted);
    expect(rejected.rawMessage).toBe(
      "the verifier's queue is full: 2 requests are waiting for 1 REPL workers (repl.queue_capacity); retry later",
    );
    expect((await running).verdict).toBe(Verdict.PROVED);
    for (const response of await Promise.all(waiting)) expect(response.verdict).toBe(Verdict.PROVED);
  });

  it("answers every request when faults hit while others wait in the queue", async () => {
    // Pairs: one runs while the other waits (the queue holds two, even while the worker restarts).
    const expected: Record<string, Verdict> = {
      "by crash": Verdict.CRASHED,
      "by garbage": Verdict.CRASHED,
      "by hang": Verdict.TIMEOUT,
      "by norm_num": Verdict.PROVED,
    };
    const waves = [
      ["by crash", "by norm_num"],
      ["by hang", "by norm_num"],
      ["by norm_num", "by garbage"],
      ["by garbage", "by hang"],
      ["by norm_num", "by norm_num"],
    ];
    for (const wave of waves) {
      const responses = await Promise.all(wave.map((proof) => verify(proof)));
      expect(responses.map((response) => response.verdict)).toEqual(wave.map((proof) => expected[proof]));
    }
    const stats = await harness.client.poolStats({});
    expect(stats.queueDepth).toBe(0);
    expect(stats.busy).toBe(0);
  });
});

describe("memory cap between requests", () => {
  it("a worker left over its cap by a request is recycled before the next one", async () => {
    const bloating = standIn({
      rules: [
        { when: { cmd: { includes: "by norm_num" } }, declares: { axioms: ["propext"] } },
        { when: { cmd: { includes: "by bloat" } }, declares: { axioms: [] }, fault: { kind: "grow", mb: 200 } },
      ],
    });
    // Sampling too rarely to see the growth during the request: the check after it must.
    const own = await startVerifier({ repl: { command: bloating.command, memory_limit_mb: 180, memory_sample_ms: 600_000 } });
    try {
      const first = await own.client.verify({ theorem, proof: "by bloat" });
      expect(first.verdict).toBe(Verdict.PROVED);
      const next = await own.client.verify({ theorem, proof: "by norm_num" });
      expect(next.verdict).toBe(Verdict.PROVED);
      const stats = await own.client.poolStats({});
      expect(stats.restarts.memory).toBe(1n);
      expect(new Set(bloating.requests().map((logged) => logged.pid)).size).toBe(2);
    } finally {
      await own.close();
      bloating.cleanup();
    }
  });
});
