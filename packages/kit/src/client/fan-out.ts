// Calls that must reach every replica of a service, not one: a typed client per replica
// of a balanced client, and one stream relayed to several consumers at once (each replica's
// upload of the same adapter), read from its source once, in step with the slowest
// consumer still reading, so memory stays bounded whatever the stream's size.
import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client } from "@connectrpc/connect";
import type { ServiceClient } from "./create-service-client.js";

export interface ReplicaClient<T extends DescService> {
  url: string;
  client: Client<T>;
}

/** A client per current replica of `serviceClient`, each calling that replica only. */
export function replicaClients<T extends DescService>(service: T, serviceClient: Pick<ServiceClient<T>, "transport">): ReplicaClient<T>[] {
  return serviceClient.transport.replicas().map((replica) => ({ url: replica.url, client: createClient(service, replica.transport) }));
}

/**
 * Feeds every item of `source` to each consumer, all running at once; a consumer that stops
 * (settles before the end) is dropped and the others go on. The source is read ahead of the
 * slowest live consumer by at most `highWater` items. An error of the source ends every
 * consumer's input with that error and is thrown once they have all settled. Returns each
 * consumer's outcome, in order.
 */
export async function broadcast<T, R>(
  source: AsyncIterable<T>,
  consumers: ReadonlyArray<(items: AsyncIterable<T>) => Promise<R>>,
  highWater = 4,
): Promise<PromiseSettledResult<R>[]> {
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const channels = consumers.map(() => new Channel<T>(notify));
  const outcomes = Promise.allSettled(
    consumers.map((consume, i) =>
      consume(channels[i]!).finally(() => {
        channels[i]!.stop();
        notify();
      }),
    ),
  );
  let failure: { error: unknown } | undefined;
  const iterator = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      // Room in every live consumer's queue before the next item is read, or none left to feed.
      while (channels.some((c) => c.live && c.queued >= highWater)) await new Promise<void>((resolve) => (wake = resolve));
      if (!channels.some((c) => c.live)) {
        await iterator.return?.();
        break;
      }
      const next = await iterator.next();
      if (next.done) break;
      for (const channel of channels) channel.push(next.value);
    }
  } catch (error) {
    failure = { error };
  }
  for (const channel of channels) channel.end(failure);
  const settled = await outcomes;
  if (failure) throw failure.error;
  return settled;
}

/** One consumer's queue: an async iterable the pump pushes into. */
class Channel<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private ended: { error?: { error: unknown } } | undefined;
  private waiting: (() => void) | undefined;
  live = true;

  constructor(private readonly onTaken: () => void) {}

  get queued(): number {
    return this.items.length;
  }

  push(item: T): void {
    if (!this.live) return;
    this.items.push(item);
    this.flush();
  }

  end(failure?: { error: unknown }): void {
    this.ended = failure ? { error: failure } : {};
    this.flush();
  }

  /** The consumer settled: nothing more is queued for it. */
  stop(): void {
    this.live = false;
    this.items.length = 0;
  }

  private flush(): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.items.length > 0) {
        const item = this.items.shift() as T;
        this.onTaken();
        yield item;
        continue;
      }
      if (this.ended) {
        if (this.ended.error) throw this.ended.error.error;
        return;
      }
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }
}
