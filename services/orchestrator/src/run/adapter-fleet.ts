// The adapters of a run across every inference replica. Each replica holds its own adapters,
// and the kit's client balances each Generate to any of them, so an adapter must be in every
// replica before one samples for it:
// - loadEverywhere relays one LoadAdapter stream (the learner's export, read once) to every
//   current replica in parallel;
// - a replica that lacks an adapter (one that started or restarted after the load, or was down
//   during it) refuses the Generate with NOT_FOUND naming it (MISSING_ADAPTER_HEADER); the
//   transport's recovery (`recover`) then loads that adapter into that replica from the files
//   remembered for it, and the Generate is asked there again. A replica never samples a request
//   from another policy than the one it names, and a name nobody remembered stays refused.
import { Code, ConnectError } from "@connectrpc/connect";
import { adapterMessages, loadAdapterEnvelope, MISSING_ADAPTER_HEADER, type AdapterFile } from "@lean-grpo/adapter-files";
import { InferenceService, type LoadAdapterRequest, type LoadAdapterResponse } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { broadcast, createLogger, replicaClients, type Replica, type ReplicaClient, type ServiceClient } from "@lean-grpo/kit";
import { createClient } from "@connectrpc/connect";

const log = createLogger("orchestrator");

export type InferenceReplica = ReplicaClient<typeof InferenceService>;

interface RememberedAdapter {
  version: number;
  /** Reads its files again (from the run's directory), for each replica that asks for it. */
  files: () => Promise<AdapterFile[]>;
}

export class AdapterFleet {
  private readonly remembered = new Map<string, RememberedAdapter>();
  /** Catch-up loads under way, by replica URL and adapter name: many refused Generates, one load. */
  private readonly catchingUp = new Map<string, Promise<void>>();

  constructor(private readonly inference: Pick<ServiceClient<typeof InferenceService>, "transport">) {}

  /** The inference replicas now, each called directly. */
  replicas(): InferenceReplica[] {
    return replicaClients(InferenceService, this.inference);
  }

  /** Where `name`'s files are, so that a replica lacking it later is brought to it. */
  remember(name: string, version: number, files: () => Promise<AdapterFile[]>): void {
    this.remembered.set(name, { version, files });
  }

  /**
   * Loads the adapter that `requests` carry into every current replica at once, reading
   * `requests` once. A replica that is down (UNAVAILABLE) is left to catch up when it next
   * serves a Generate; one that already holds the name counts as loaded; any other refusal
   * fails the load, naming the replica. Fails UNAVAILABLE when no replica took it.
   */
  async loadEverywhere(requests: AsyncIterable<LoadAdapterRequest>, signal?: AbortSignal): Promise<LoadAdapterResponse[]> {
    const replicas = this.replicas();
    if (replicas.length === 0) throw new ConnectError("no inference replica to load the adapter into", Code.Unavailable);
    const outcomes = await broadcast(
      requests,
      replicas.map((replica) => (input: AsyncIterable<LoadAdapterRequest>) => replica.client.loadAdapter(input, { signal })),
    );
    const loaded: LoadAdapterResponse[] = [];
    let down: ConnectError | undefined;
    let took = 0;
    for (const [i, outcome] of outcomes.entries()) {
      const url = replicas[i]!.url;
      if (outcome.status === "fulfilled") {
        loaded.push(outcome.value);
        took++;
        continue;
      }
      const error = ConnectError.from(outcome.reason);
      if (error.code === Code.AlreadyExists) took++;
      else if (error.code === Code.Unavailable) {
        down = error;
        log.warn({ replica: url, error: error.message }, "inference replica down during an adapter load; it catches up before it samples");
      } else throw new ConnectError(`inference replica ${url}: ${error.rawMessage}`, error.code, error.metadata, undefined, error);
    }
    if (took === 0) throw down ?? new ConnectError("no inference replica took the adapter", Code.Unavailable);
    return loaded;
  }

  /** Remembers `files` as `name` and loads them into every replica (loadEverywhere). */
  async loadFiles(name: string, version: number, files: AdapterFile[], signal?: AbortSignal): Promise<LoadAdapterResponse[]> {
    this.remember(name, version, async () => files);
    return this.loadEverywhere(namedRequests(name, version, files), signal);
  }

  /** Unloads `name` from every replica that holds it, and forgets it; best effort (a replica down holds nothing). */
  async unloadEverywhere(name: string): Promise<void> {
    this.remembered.delete(name);
    await Promise.allSettled(this.replicas().map((replica) => replica.client.unloadAdapter({ name })));
  }

  /** The inference transport's recovery: loads the adapter a replica said it lacks, if this run has its files. */
  readonly recover = async (error: ConnectError, replica: Replica, signal: AbortSignal | undefined): Promise<boolean> => {
    if (error.code !== Code.NotFound) return false;
    const name = error.metadata.get(MISSING_ADAPTER_HEADER);
    const adapter = name ? this.remembered.get(name) : undefined;
    if (!name || !adapter) return false;
    const key = `${replica.url}\u0000${name}`;
    let load = this.catchingUp.get(key);
    if (!load) {
      load = this.catchUp(replica, name, adapter, signal).finally(() => this.catchingUp.delete(key));
      this.catchingUp.set(key, load);
    }
    await load;
    return true;
  };

  /**
   * Runs `call` on one replica, bringing it to the adapter it lacks first (as the balanced
   * client's recovery does); for calls that must reach a chosen replica (the adapter check).
   */
  async onReplica<T>(
    replica: InferenceReplica,
    call: (client: InferenceReplica["client"]) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    try {
      return await call(replica.client);
    } catch (e) {
      const error = ConnectError.from(e);
      const pinned = this.inference.transport.replicas().find((r) => r.url === replica.url);
      if (!pinned || !(await this.recover(error, pinned, signal))) throw error;
      return call(replica.client);
    }
  }

  private async catchUp(replica: Replica, name: string, adapter: RememberedAdapter, signal: AbortSignal | undefined): Promise<void> {
    const files = await adapter.files();
    try {
      await createClient(InferenceService, replica.transport).loadAdapter(namedRequests(name, adapter.version, files), { signal });
      log.info({ replica: replica.url, adapter: name }, "inference replica lacked the adapter; loaded it there before it samples");
    } catch (e) {
      const error = ConnectError.from(e);
      if (error.code !== Code.AlreadyExists) throw error;
    }
  }
}

/** LoadAdapter's stream of `files` under `name` (an evaluation's adapter has a name of its own, not policy-v<N>). */
async function* namedRequests(name: string, version: number, files: AdapterFile[]): AsyncGenerator<LoadAdapterRequest> {
  const [header, ...chunks] = [...adapterMessages(loadAdapterEnvelope, { version }, files)];
  if (header?.part.case === "source") header.part.value.name = name;
  yield header!;
  yield* chunks;
}
