// The one line `lean-grpo` prints when a command fails: what went wrong, without the RPC
// code prefix a ConnectError's message carries, and where the services' full logs are.
import { ConnectError } from "@connectrpc/connect";

export function describeCommandError(error: unknown, logDir: string | undefined): string {
  const message = error instanceof ConnectError ? error.rawMessage : error instanceof Error ? error.message : String(error);
  return logDir ? `${message} (service logs: ${logDir}/)` : message;
}
