// Why a REPL process ended. Every way a worker dies carries one of these kinds,
// which become the restart causes of PoolStats and the verdicts of the requests
// that were in flight.

/** "shutdown" is the pool closing; the others are PoolStats' restart causes. */
export type EndKind = "timeout" | "crash" | "memory" | "recycle" | "cancel" | "shutdown";

/** A request could not be answered because its REPL process was (or had to be) killed. */
export class ReplFailure extends Error {
  override name = "ReplFailure";
  constructor(
    readonly kind: EndKind,
    message: string,
  ) {
    super(message);
  }
}

/** The REPL could not be started at all (bad command, missing directory): nothing can be checked. */
export class ReplUnavailable extends Error {
  override name = "ReplUnavailable";
}
