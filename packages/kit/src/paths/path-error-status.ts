// The status a refused path answers with, for services that map errors by hand.
import { Code, ConnectError } from "@connectrpc/connect";
import type { PathError } from "./path-error.js";

const CODES = { invalid: Code.InvalidArgument, missing: Code.NotFound, too_large: Code.ResourceExhausted } as const;

export function pathErrorToConnect(error: PathError): ConnectError {
  return new ConnectError(error.message, CODES[error.code]);
}
