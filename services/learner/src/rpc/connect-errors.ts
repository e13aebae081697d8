// Maps the learner's errors to gRPC status codes. Messages already name what was wrong and
// what is accepted; they pass through unchanged. The kit applies the mapping around every
// handler; anything it does not know is INTERNAL, without a stack trace.
import { Code, type ConnectError } from "@connectrpc/connect";
import { toConnectError as mapFailure, type DomainErrorMapping } from "@lean-grpo/kit";
import { ModelLibraryError } from "@lean-grpo/lm";
import { AlgorithmConfigError } from "../algorithms/algorithm-config-error.js";
import { CheckpointError } from "../training/checkpoint-files.js";
import { StepOrderError, UnknownVersionError } from "../training/learner.js";
import { SampleError } from "../training/sample-error.js";

export const learnerErrors: DomainErrorMapping = [
  [AlgorithmConfigError, Code.InvalidArgument],
  [SampleError, Code.InvalidArgument],
  [ModelLibraryError, Code.InvalidArgument],
  [CheckpointError, Code.InvalidArgument],
  [StepOrderError, Code.FailedPrecondition],
  [UnknownVersionError, Code.NotFound],
];

/** For code that maps by hand rather than leave it to the kit. */
export function toConnectError(error: unknown, signal?: AbortSignal): ConnectError {
  return mapFailure(error, learnerErrors, signal);
}
