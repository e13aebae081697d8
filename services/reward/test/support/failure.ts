// The ConnectError a call ends with; throws when the call succeeds.
import { ConnectError } from "@connectrpc/connect";

export async function failure(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("the call succeeded");
}
