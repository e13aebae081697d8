// The service's failures as gRPC status codes, each with a message that says what
// was wrong and what to do. The kit applies the mapping around every handler.
import { Code, ConnectError } from "@connectrpc/connect";
import type { DomainErrorMapping } from "@lean-grpo/kit";
import { QueueFull } from "../pool/repl-pool.js";
import { HeaderRejected } from "../pool/repl-worker.js";
import { ReplFailure, ReplUnavailable } from "../repl/repl-failure.js";
import { SessionElsewhere, SessionLost, SessionNotFound } from "../tactic/proof-sessions.js";
import { InvalidField } from "../verdict/theorem-target.js";

export const verifierErrors: DomainErrorMapping = (error) => {
  if (error instanceof InvalidField) return new ConnectError(error.message, Code.InvalidArgument);
  if (error instanceof HeaderRejected) {
    return new ConnectError(`theorem.header (or theorem.imports): ${error.message}`, Code.InvalidArgument);
  }
  if (error instanceof QueueFull) return new ConnectError(error.message, Code.ResourceExhausted);
  if (error instanceof ReplUnavailable) return new ConnectError(error.message, Code.Unavailable);
  if (error instanceof SessionNotFound) return new ConnectError(error.message, Code.NotFound);
  if (error instanceof SessionLost) return new ConnectError(error.message, Code.FailedPrecondition);
  // ABORTED: retry at a higher level, here from StartProof; the mesh lost the state, not the caller.
  if (error instanceof SessionElsewhere) return new ConnectError(error.message, Code.Aborted);
  if (error instanceof ReplFailure && error.kind === "shutdown") return new ConnectError(error.message, Code.Unavailable);
  return undefined;
};

export function noReplConfigured(): ConnectError {
  return new ConnectError(
    "no Lean REPL is configured: set repl.command in the verifier's config (e.g. repl.command=[lake, env, /opt/repl/.lake/build/bin/repl] " +
      "with repl.cwd=/opt/mathlib4) or the LEAN_REPL_CMD environment variable (and LEAN_REPL_CWD)",
    Code.Unavailable,
  );
}
