import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { createServiceClient, type ServiceClient } from "./create-service-client.js";
import type { BalancedTransportOptions } from "./balanced-transport.js";
import { startReplica, within, type InferenceImpl, type Replica } from "../../test/support/replicas.js";

const prompt = { kind: { case: "text" as const, value: "theorem foo : 1 + 1 = 2" } };

let replicas: Replica[] = [];
let clients: ServiceClient<typeof InferenceService>[] = [];

afterEach(async () => {
  for (const { transport } of clients) transport.close();
  await Promise.all(replicas.map((r) => r.kill()));
  replicas = [];
  clients = [];
});

async function start(impls: ((name: string) => InferenceImpl | undefined)[]): Promise<Replica[]> {
  const started = await Promise.all(impls.map((impl, i) => startReplica(`r${i}`, impl(`r${i}`))));
  replicas.push(...started);
  return started;
}

const defaults = () => undefined;

function connect(options: Partial<BalancedTransportOptions> = {}) {
  const made = createServiceClient(InferenceService, {
    endpoints: replicas.map((r) => r.url),
    ...options,
  } as BalancedTransportOptions);
  clients.push(made);
  return made;
}

/** Runs `calls` calls, `concurrency` at a time, returning who served each. */
async function tokenizeMany(client: ServiceClient<typeof InferenceService>["client"], calls: number, concurrency: number) {
  const served: string[] = [];
  for (let done = 0; done < calls; done += concurrency) {
    const batch = Array.from({ length: Math.min(concurrency, calls - done) }, () => client.tokenize({ prompt }));
    for (const response of await Promise.all(batch)) served.push(response.templatedText);
  }
  return served;
}

function countBy(names: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of names) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}

async function codeOf(promise: Promise<unknown>): Promise<Code> {
  try {
    await promise;
  } catch (e) {
    return ConnectError.from(e).code;
  }
  throw new Error("call succeeded, an error was expected");
}

describe("createBalancedTransport", () => {
  it("spreads 300 calls over 3 replicas within ±10 % each", async () => {
    await start([defaults, defaults, defaults]);
    const { client, transport } = connect();

    const counts = countBy(await tokenizeMany(client, 300, 30));

    expect(Object.keys(counts).sort()).toEqual(["r0", "r1", "r2"]);
    for (const count of Object.values(counts)) {
      expect(count).toBeGreaterThanOrEqual(90);
      expect(count).toBeLessThanOrEqual(110);
    }
    expect(transport.endpoints()).toEqual(replicas.map((r) => r.url));
    expect(Object.values(transport.stats()).map((s) => s.calls)).toEqual([counts.r0, counts.r1, counts.r2]);
  });

  it("loses no call when a replica dies mid-run", async () => {
    const [, doomed] = await start([defaults, defaults, defaults]);
    const { client, transport } = connect({ retry: { initialBackoffMs: 5 } });

    // Calls already running on a replica that dies are not retried (they may
    // have run), so the replica dies between batches, with nothing in flight.
    const before = await tokenizeMany(client, 150, 10);
    await doomed!.kill();
    const after = await tokenizeMany(client, 150, 10);

    expect(before.length + after.length).toBe(300);
    expect(before).toContain("r1");
    expect(after).not.toContain("r1");
    expect(countBy(after).r0).toBeGreaterThan(60);
    expect(countBy(after).r2).toBeGreaterThan(60);
    expect(transport.stats()[doomed!.url]!.failures).toBeGreaterThanOrEqual(1);
  });

  it("retries UNAVAILABLE on the next replica until one answers", async () => {
    const attempts: string[] = [];
    const flaky = (name: string): InferenceImpl => ({
      tokenize() {
        attempts.push(name);
        if (attempts.length <= 2) throw new ConnectError("warming up", Code.Unavailable);
        return { templatedText: name };
      },
    });
    await start([flaky, flaky, flaky]);
    const { client } = connect({ retry: { initialBackoffMs: 5 } });

    const response = await client.tokenize({ prompt });

    expect(attempts).toHaveLength(3);
    expect(new Set(attempts).size).toBe(3);
    expect(response.templatedText).toBe(attempts[2]);
  });

  it("does not retry other codes", async () => {
    let calls = 0;
    const strict = (): InferenceImpl => ({
      tokenize() {
        calls++;
        throw new ConnectError("prompt is empty", Code.InvalidArgument);
      },
    });
    await start([strict, strict, strict]);
    const { client } = connect({ retry: { initialBackoffMs: 5 } });

    expect(await codeOf(client.tokenize({ prompt }))).toBe(Code.InvalidArgument);
    expect(calls).toBe(1);
  });

  it("gives up within the deadline when every replica is UNAVAILABLE", async () => {
    const budgets: (number | undefined)[] = [];
    const down = (): InferenceImpl => ({
      tokenize(_request, context) {
        budgets.push(context.timeoutMs());
        throw new ConnectError("overloaded", Code.Unavailable);
      },
    });
    await start([down, down, down]);
    const { client } = connect({ retry: { maxAttempts: 1000, initialBackoffMs: 10, maxBackoffMs: 100 } });

    const started = Date.now();
    const code = await codeOf(client.tokenize({ prompt }, { timeoutMs: 200 }));
    const elapsed = Date.now() - started;

    expect([Code.DeadlineExceeded, Code.Unavailable]).toContain(code);
    expect(elapsed).toBeLessThan(1000);
    expect(budgets.length).toBeGreaterThan(1);
    // Every attempt left with part of the deadline; none went out after it
    // (connect would send such an attempt with no deadline at all).
    for (const budget of budgets) {
      expect(budget).toBeGreaterThan(0);
      expect(budget).toBeLessThanOrEqual(200);
    }
  });

  it("gives a retried attempt only the time left of the deadline", async () => {
    const budgets: (number | undefined)[] = [];
    const slowThenDown = (): InferenceImpl => ({
      async tokenize(_request, context) {
        budgets.push(context.timeoutMs());
        if (budgets.length > 1) return {};
        await new Promise((resolve) => setTimeout(resolve, 80));
        throw new ConnectError("overloaded", Code.Unavailable);
      },
    });
    await start([slowThenDown, slowThenDown]);
    const { client } = connect({ retry: { initialBackoffMs: 1 } });

    await client.tokenize({ prompt }, { timeoutMs: 300 });

    expect(budgets).toHaveLength(2);
    expect(budgets[0]).toBeGreaterThan(220);
    expect(budgets[1]).toBeGreaterThan(0);
    expect(budgets[1]).toBeLessThanOrEqual(220);
  });

  it("applies defaultTimeoutMs to calls that set no timeout", async () => {
    let budget: number | undefined;
    await start([
      () => ({
        tokenize: (_request, context) => {
          budget = context.timeoutMs();
          return {};
        },
      }),
    ]);
    const { client } = connect({ defaultTimeoutMs: 5000 });

    await client.tokenize({ prompt });

    expect(budget).toBeGreaterThan(4000);
    expect(budget).toBeLessThanOrEqual(5000);
  });

  it("stops retrying at once when the call is aborted", async () => {
    let calls = 0;
    const down = (): InferenceImpl => ({
      tokenize() {
        calls++;
        throw new ConnectError("overloaded", Code.Unavailable);
      },
    });
    await start([down, down]);
    const { client } = connect({ retry: { maxAttempts: 50, initialBackoffMs: 5000, maxBackoffMs: 5000 } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);

    const started = Date.now();
    const code = await codeOf(client.tokenize({ prompt }, { signal: controller.signal }));

    expect(code).toBe(Code.Canceled);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(calls).toBeLessThanOrEqual(2);
  });

  it("sends each stream to one replica and never retries it", async () => {
    const opened: string[] = [];
    const streaming = (name: string): InferenceImpl => ({
      async *generateStream() {
        opened.push(name);
        if (name === "r1") throw new ConnectError("draining", Code.Unavailable);
        yield { index: 0, text: name };
        yield { index: 1, text: name };
      },
    });
    await start([streaming, streaming, streaming]);
    const { client, transport } = connect();

    const outcomes = await Promise.all(
      [0, 1, 2].map(async () => {
        const texts: string[] = [];
        try {
          for await (const chunk of client.generateStream({ prompt, n: 1 })) texts.push(chunk.text);
          return texts.join(",");
        } catch (e) {
          return Code[ConnectError.from(e).code];
        }
      }),
    );

    expect(outcomes.sort()).toEqual(["Unavailable", "r0,r0", "r2,r2"]);
    expect(opened.sort()).toEqual(["r0", "r1", "r2"]);
    expect(transport.stats()[replicas[1]!.url]).toEqual({ calls: 1, failures: 1 });
  });

  it("lets the servers close after close(), and fails later calls", async () => {
    await start([defaults, defaults, defaults]);
    const { client, transport } = connect();
    await tokenizeMany(client, 3, 3);

    transport.close();

    await within(Promise.all(replicas.map((r) => r.close())), 2000);
    expect(await codeOf(client.tokenize({ prompt }))).toBe(Code.Canceled);
  });
});
