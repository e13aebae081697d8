// Calls that reach every replica: a client per replica, a balanced call repaired and retried on
// the replica that refused it, and one stream relayed to several consumers read once.
import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { createServiceClient, type ServiceClient } from "./create-service-client.js";
import { broadcast, replicaClients } from "./fan-out.js";
import { startReplica, tokenizeAs, type Replica } from "../../test/support/replicas.js";

const prompt = { kind: { case: "text" as const, value: "x" } };

let replicas: Replica[] = [];
let clients: ServiceClient<typeof InferenceService>[] = [];

afterEach(async () => {
  for (const { transport } of clients) transport.close();
  await Promise.all(replicas.map((r) => r.kill()));
  replicas = [];
  clients = [];
});

describe("replicaClients", () => {
  it("gives one client per replica, each calling only its own", async () => {
    replicas = await Promise.all(["a", "b", "c"].map((name) => startReplica(name)));
    const balanced = createServiceClient(InferenceService, { endpoints: replicas.map((r) => r.url) });
    clients.push(balanced);
    const each = replicaClients(InferenceService, balanced);
    expect(each.map((r) => r.url)).toEqual(replicas.map((r) => r.url));
    for (const [i, replica] of each.entries()) {
      for (let k = 0; k < 3; k++) expect((await replica.client.tokenize({ prompt })).templatedText).toBe(replicas[i]!.name);
    }
    expect(balanced.transport.stats()[replicas[1]!.url]!.calls).toBe(3);
  });
});

describe("recover", () => {
  it("retries a refused call once on the replica that refused it, after the repair, never on another", async () => {
    // Replica "cold" lacks something until it is given it; "warm" has it.
    const given = new Set<string>();
    const lacking = (name: string) => ({
      tokenize: () => {
        if (!given.has(name)) throw new ConnectError(`${name} lacks it`, Code.NotFound, { "x-lacks": name });
        return { tokenIds: [1], templatedText: name };
      },
    });
    replicas = await Promise.all([startReplica("cold", lacking("cold")), startReplica("cold2", lacking("cold2"))]);
    const repaired: string[] = [];
    const balanced = createServiceClient(InferenceService, {
      endpoints: replicas.map((r) => r.url),
      recover: async (error, replica) => {
        const name = error.metadata.get("x-lacks");
        if (error.code !== Code.NotFound || !name) return false;
        repaired.push(replica.url);
        given.add(name);
        return true;
      },
    });
    clients.push(balanced);
    const served = [];
    for (let k = 0; k < 4; k++) served.push((await balanced.client.tokenize({ prompt })).templatedText);
    // Each replica was repaired once, where it refused, and then answered that same call.
    expect(repaired).toEqual(replicas.map((r) => r.url));
    expect(served).toEqual(["cold", "cold2", "cold", "cold2"]);
  });

  it("passes the refusal on when the recovery cannot help", async () => {
    replicas = [
      await startReplica("r", {
        tokenize: () => {
          throw new ConnectError("no", Code.NotFound);
        },
      }),
    ];
    let asked = 0;
    const balanced = createServiceClient(InferenceService, {
      endpoints: [replicas[0]!.url],
      recover: async () => {
        asked++;
        return false;
      },
    });
    clients.push(balanced);
    const error = await balanced.client.tokenize({ prompt }).catch((e) => ConnectError.from(e));
    expect((error as ConnectError).code).toBe(Code.NotFound);
    expect(asked).toBe(1);
  });

  it("is not asked about UNAVAILABLE, which moves the call to another replica", async () => {
    const down = await startReplica("down");
    await down.kill();
    replicas = [await startReplica("up", tokenizeAs("up"))];
    let asked = 0;
    const balanced = createServiceClient(InferenceService, {
      endpoints: [down.url, replicas[0]!.url],
      recover: async () => {
        asked++;
        return false;
      },
    });
    clients.push(balanced);
    for (let k = 0; k < 2; k++) expect((await balanced.client.tokenize({ prompt })).templatedText).toBe("up");
    expect(asked).toBe(0);
  });
});

describe("broadcast", () => {
  async function* numbers(count: number, read: number[]): AsyncGenerator<number> {
    for (let i = 0; i < count; i++) {
      read.push(i);
      yield i;
    }
  }
  const collect = async (items: AsyncIterable<number>) => {
    const got: number[] = [];
    for await (const item of items) got.push(item);
    return got;
  };

  it("gives every consumer every item, reading the source once", async () => {
    const read: number[] = [];
    const outcomes = await broadcast(numbers(50, read), [collect, collect, collect]);
    expect(read).toEqual([...Array(50).keys()]);
    for (const outcome of outcomes) expect(outcome).toEqual({ status: "fulfilled", value: [...Array(50).keys()] });
  });

  it("reads ahead of the slowest consumer by at most highWater items", async () => {
    const read: number[] = [];
    let maxAhead = 0;
    const slow = async (items: AsyncIterable<number>) => {
      let taken = 0;
      for await (const _ of items) {
        taken++;
        maxAhead = Math.max(maxAhead, read.length - taken);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      return Array(taken).fill(0) as number[];
    };
    const outcomes = await broadcast(numbers(30, read), [slow, collect], 4);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled"]);
    expect(maxAhead).toBeLessThanOrEqual(4);
  });

  it("drops a consumer that fails and goes on with the others", async () => {
    const failing = async (items: AsyncIterable<number>) => {
      for await (const item of items) if (item === 3) throw new Error("refused at 3");
      return [];
    };
    const outcomes = await broadcast(numbers(20, []), [failing, collect]);
    expect(outcomes[0]).toMatchObject({ status: "rejected", reason: new Error("refused at 3") });
    expect(outcomes[1]).toEqual({ status: "fulfilled", value: [...Array(20).keys()] });
  });

  it("ends every consumer's input with the source's error, and throws it", async () => {
    async function* broken(): AsyncGenerator<number> {
      yield 1;
      throw new Error("export cut off");
    }
    const seen: unknown[] = [];
    const consumer = async (items: AsyncIterable<number>) => {
      try {
        return await collect(items);
      } catch (error) {
        seen.push(error);
        throw error;
      }
    };
    await expect(broadcast(broken(), [consumer, consumer])).rejects.toThrow("export cut off");
    expect(seen).toHaveLength(2);
  });
});
