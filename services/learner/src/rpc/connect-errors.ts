// Maps the learner's errors to gRPC status codes. Messages already name what was wrong and
// what is accepted; they pass through unchanged. Anything unexpected is INTERNAL, without
// a stack trace.
import { Code, ConnectError } from "@connectrpc/connect";
import { AlgorithmConfigError } from "../algorithms/algorithm-config-error.js";
import { ModelLibraryError } from "@lean-grpo/lm";
import { CheckpointError } from "../training/checkpoint-files.js";
import { StepOrderError, UnknownVersionError } from "../training/learner.js";
import { SampleError } from "../training/sample-error.js";

export function toConnectError(error: unknown, signal?: AbortSignal): ConnectError {
  if (error instanceof ConnectError) return error;
  if (signal?.aborted) {
    const reason: unknown = signal.reason;
    return reason instanceof ConnectError ? reason : new ConnectError("the call was cancelled", Code.Canceled);
  }
  if (error instanceof AlgorithmConfigError || error instanceof SampleError || error instanceof ModelLibraryError || error instanceof CheckpointError) {
    return new ConnectError(error.message, Code.InvalidArgument);
  }
  if (error instanceof StepOrderError) return new ConnectError(error.message, Code.FailedPrecondition);
  if (error instanceof UnknownVersionError) return new ConnectError(error.message, Code.NotFound);
  return new ConnectError(`learner error: ${(error as Error)?.message ?? String(error)}`, Code.Internal);
}

/** Runs a handler body, mapping what it throws. */
export async function mapped<T>(signal: AbortSignal, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw toConnectError(error, signal);
  }
}
