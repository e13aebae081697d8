// A call pinned to a worker generation (a tactic session's) that reaches the pool after
// that generation ended, having been screened in the meantime, learns how it ended (a
// timeout here), as the session's own record says, not a guessed "crash". Under load this
// ordering is common: the screen thread is slow, the restart is not.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerifierConfigSchema } from "../src/config.js";
import { ReplPool, WorkerLost, type WorkerPin } from "../src/pool/repl-pool.js";
import { ReplFailure } from "../src/repl/repl-failure.js";
import { prepareSandbox } from "../src/repl/sandbox.js";
import { REPO_ROOT, standIn, type StandIn } from "./support/stand-in.js";

const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as never;
let repl: StandIn;
let pool: ReplPool;

beforeAll(async () => {
  repl = standIn({ rules: [{ when: { cmd: { includes: "spin" } }, fault: { kind: "hang" } }] });
  const config = VerifierConfigSchema.parse({ repl: { sandbox: { mode: "none" } } }).repl;
  pool = new ReplPool({
    command: repl.command,
    cwd: REPO_ROOT,
    env: {},
    size: 1,
    queueCapacity: 8,
    headerTimeoutMs: 30_000,
    headerCacheSize: 4,
    warmHeaders: [],
    memoryLimitBytes: 0,
    memorySampleMs: 1000,
    maxRequestsPerWorker: 0,
    maxResponseChars: 1_000_000,
    sandbox: prepareSandbox(config.sandbox, quiet),
    logger: quiet,
  });
  await pool.start();
});
afterAll(async () => {
  await pool?.close();
  repl?.cleanup();
});

const command = (cmd: string, pin?: WorkerPin, deadlineMs = 30_000) =>
  pool.run({ pin, run: (lease) => lease.send({ cmd }, { deadline: Date.now() + deadlineMs }) });

describe("a call pinned to a generation that has ended", () => {
  it("is told how that generation ended", async () => {
    const { ranOn } = await command("def a := 1");
    await expect(command("spin", ranOn, 300)).rejects.toSatisfy((error) => error instanceof ReplFailure && error.kind === "timeout");
    // Wait for the worker's next generation, as a call screened meanwhile would.
    for (;;) {
      const next = await command("def b := 2");
      if (next.ranOn.generation !== ranOn.generation) break;
    }
    const lost = await command("def c := 3", ranOn).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(lost).toBeInstanceOf(WorkerLost);
    expect((lost as WorkerLost).kind).toBe("timeout");
  });
});
