// The client side of LeanVerifierService as the reward service uses it: one
// balanced client over the configured URLs (or a dns:/// target), with trace
// context passed on.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { LeanVerifierService, type VerifyRequestSchema, type VerifyResponse } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { callerAuth, clientTarget, createServiceClient, rpcClientTracing } from "@lean-grpo/kit";

export interface Verifier {
  /** Where it sends requests, for messages. */
  readonly target: string;
  verify(
    request: MessageInitShape<typeof VerifyRequestSchema>,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<VerifyResponse>;
  close(): void;
}

/** `token`: presented on every call when the verifier requires auth. */
export function connectVerifier(urls: readonly string[], token?: string): Verifier {
  const { client, transport } = createServiceClient(LeanVerifierService, {
    ...clientTarget(urls),
    interceptors: [rpcClientTracing(), ...callerAuth(token)],
  });
  return {
    target: urls.join(", "),
    verify: (request, { signal, timeoutMs }) => client.verify(request, { signal, timeoutMs }),
    close: () => transport.close(),
  };
}
