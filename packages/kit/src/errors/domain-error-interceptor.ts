// Applies each service's DomainErrorMapping around its handlers, as a connect
// interceptor: the same code serves every protocol and every call shape. Unary and
// client-streaming failures reject `next`; server-streaming and bidi failures surface
// while the response stream is read, so that stream is wrapped.
import type { ConnectError, Interceptor, StreamRequest, UnaryRequest } from "@connectrpc/connect";
import { toConnectError, type DomainErrorMapping } from "./domain-error-mapping.js";

export interface DomainErrorInterceptorOptions {
  /** Mappings by service type name ("leangrpo.v1.LeanVerifierService"); other services' errors pass untouched. */
  mappings: ReadonlyMap<string, DomainErrorMapping>;
  /** Errors no mapping knows are bugs: they answer INTERNAL, and this is where they get logged with their stack. */
  onUnmapped?: (error: unknown, request: UnaryRequest | StreamRequest) => void;
}

export function domainErrorInterceptor(options: DomainErrorInterceptorOptions): Interceptor {
  return (next) => async (request) => {
    const mapping = options.mappings.get(request.service.typeName);
    if (mapping === undefined) return next(request);
    const onUnmapped = options.onUnmapped && ((error: unknown) => options.onUnmapped!(error, request));
    const toStatus = (error: unknown) => toConnectError(error, mapping, request.signal, onUnmapped);
    let response;
    try {
      response = await next(request);
    } catch (error) {
      throw toStatus(error);
    }
    if (!response.stream) return response;
    return { ...response, message: mapStreamErrors(response.message, toStatus) };
  };
}

async function* mapStreamErrors<T>(source: AsyncIterable<T>, toStatus: (error: unknown) => ConnectError): AsyncGenerator<T> {
  try {
    // yield* forwards return() too, so a cancelled stream still stops its handler.
    yield* source;
  } catch (error) {
    throw toStatus(error);
  }
}
