// Calls that must reach the replica an earlier call reached, because that replica holds
// state the others do not (a verifier's tactic session). The balanced transport reads the
// affinity from the call's context values: the opening call is balanced as usual and
// remembers which replica answered; every pinned call goes to that replica only, and is
// never retried on another one, since another replica cannot serve it.
import { Code, ConnectError, createContextKey, createContextValues, type CallOptions } from "@connectrpc/connect";

export class ReplicaAffinity {
  private url: string | undefined;

  /** The replica that answered the opening call; undefined before it did (or on a transport that does not balance). */
  get replica(): string | undefined {
    return this.url;
  }

  /** Call options for the call that creates the state: balanced, and the replica that answers it is remembered. */
  open(options: CallOptions = {}): CallOptions {
    return withAffinity(options, { affinity: this, pinned: false });
  }

  /** Call options for a call on that state: sent to the remembered replica only. */
  pinned(options: CallOptions = {}): CallOptions {
    return withAffinity(options, { affinity: this, pinned: true });
  }

  /** Called by the transport when the opening call succeeded on `url`. */
  bind(url: string): void {
    this.url = url;
  }
}

/** What a call carries: its affinity, and whether it must go to the bound replica. */
export interface AffinityUse {
  affinity: ReplicaAffinity;
  pinned: boolean;
}

export const AFFINITY_KEY = createContextKey<AffinityUse | undefined>(undefined, { description: "replica affinity" });

function withAffinity(options: CallOptions, use: AffinityUse): CallOptions {
  const contextValues = options.contextValues ?? createContextValues();
  contextValues.set(AFFINITY_KEY, use);
  return { ...options, contextValues };
}

/** Errors made by replicaUnreachable, with the replica each names. */
const unreachable = new WeakMap<ConnectError, string>();

/**
 * The error of a pinned call whose replica could not be reached (it died, or left the
 * endpoint list): the state it held is gone with it, which is the mesh's failure, not the
 * caller's. Code UNAVAILABLE; a plain ConnectError (connect recognises its errors by name
 * and prototype, so a subclass would not pass as one), told apart by isReplicaUnreachable.
 */
export function replicaUnreachable(replica: string, why: string, cause?: unknown): ConnectError {
  const error = new ConnectError(
    `the replica ${replica} that holds this call's state cannot be reached (${why}); start again from the call that created it`,
    Code.Unavailable,
    undefined,
    undefined,
    cause,
  );
  unreachable.set(error, replica);
  return error;
}

/** Whether `error` says the replica a pinned call needed is gone (see replicaUnreachable). */
export function isReplicaUnreachable(error: unknown): error is ConnectError {
  return error instanceof ConnectError && unreachable.has(error);
}
