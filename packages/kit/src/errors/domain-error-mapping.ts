// How a service's own errors become gRPC statuses. A service declares the mapping once,
// on its registration; serve() applies it around every handler (see
// domain-error-interceptor.ts), so handlers throw their domain errors as they are.
import { Code, ConnectError } from "@connectrpc/connect";
import { PathError } from "../paths/path-error.js";
import { pathErrorToConnect } from "../paths/path-error-status.js";

// `any[]` so that classes with any constructor signature fit.
// biome-ignore lint/suspicious/noExplicitAny: any constructor signature; only instanceof is used
export type ErrorClass = abstract new (...args: any[]) => Error;

/** Instances of the class (and its subclasses) answer with the code; their message passes through. */
export type ErrorCodeRule = readonly [errorClass: ErrorClass, code: Code];

/**
 * Rules tried in order, or a function for mappings a class cannot express (a message
 * prefix, a field of the error); it returns undefined for errors it does not know.
 */
export type DomainErrorMapping = readonly ErrorCodeRule[] | ((error: unknown) => ConnectError | undefined);

/** The mapping's status for a domain error, or undefined when the mapping does not know it. */
export function mapDomainError(error: unknown, mapping: DomainErrorMapping): ConnectError | undefined {
  if (typeof mapping === "function") return mapping(error);
  for (const [errorClass, code] of mapping) {
    if (error instanceof errorClass) return new ConnectError(error.message, code, undefined, undefined, error);
  }
  return undefined;
}

/**
 * The status a handler's failure answers with: the call's abort reason (deadline,
 * cancel, shutdown) if its signal fired, whatever its work threw meanwhile; a
 * ConnectError as it is; a mapped domain error; else INTERNAL with the error's message
 * only (the error stays on the server as `cause`, so no stack reaches the client).
 */
export function toConnectError(
  error: unknown,
  mapping: DomainErrorMapping,
  signal?: AbortSignal,
  onUnmapped?: (error: unknown) => void,
): ConnectError {
  if (signal?.aborted) return ConnectError.from(signal.reason, Code.Canceled);
  if (error instanceof ConnectError) return error;
  const mapped = mapDomainError(error, mapping);
  if (mapped !== undefined) return mapped;
  // A refused client path answers the same way in every service.
  if (error instanceof PathError) return pathErrorToConnect(error);
  onUnmapped?.(error);
  return ConnectError.from(error, Code.Internal);
}
