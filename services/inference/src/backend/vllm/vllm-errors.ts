// Maps what the openai SDK throws when talking to vLLM onto gRPC status codes, so
// callers see UNAVAILABLE for a server that is down, not a generic failure.
import { Code, ConnectError } from "@connectrpc/connect";
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";

export function vllmError(error: unknown, url: string, signal: AbortSignal): ConnectError {
  if (error instanceof ConnectError) return error;
  // Aborted by our own signal: report why it was aborted (deadline, cancel, shutdown).
  if (error instanceof APIUserAbortError || signal.aborted) return ConnectError.from(signal.reason ?? error);
  if (error instanceof APIConnectionTimeoutError) {
    return new ConnectError(`vLLM at ${url} did not answer in time`, Code.DeadlineExceeded);
  }
  if (error instanceof APIConnectionError) {
    const cause = (error.cause as Error | undefined)?.message ?? error.message;
    return new ConnectError(`vLLM at ${url} is unreachable (${cause}); check that it runs and vllm.url`, Code.Unavailable);
  }
  if (error instanceof APIError) {
    const message = `vLLM: ${error.message}`;
    switch (error.status) {
      case 400:
      case 422:
        return new ConnectError(message, Code.InvalidArgument);
      case 404:
        return new ConnectError(message, Code.NotFound);
      case 429:
        return new ConnectError(message, Code.ResourceExhausted);
      default:
        return new ConnectError(message, (error.status ?? 500) >= 500 ? Code.Unavailable : Code.Internal);
    }
  }
  return ConnectError.from(error);
}
