// A LeanVerifierService handler for interop tests: the proof text picks the
// behaviour, so clients in other languages can provoke each status code. It
// exercises the kit's transport, not verification (that is the verifier's issue).
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { trace } from "@opentelemetry/api";
import { LeanVerifierService, Verdict } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { serve, type RunningServer } from "@lean-grpo/kit";

export const interopVerifier: Partial<ServiceImpl<typeof LeanVerifierService>> = {
  async verify(req, ctx) {
    switch (req.proof) {
      case "bad":
        throw new ConnectError('field "proof": "bad" is not a proof', Code.InvalidArgument);
      case "wait-for-abort":
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        throw ctx.signal.reason;
      default:
        // The reason carries the trace id the server span joined, to check propagation.
        return {
          verdict: Verdict.PROVED,
          reason: trace.getActiveSpan()?.spanContext().traceId ?? "",
          checkedSource: `${req.theorem?.statement ?? ""} := ${req.proof}`,
        };
    }
  },
};

/** Starts the interop verifier on loopback with a 1 MiB request limit. */
export function startInteropServer(auth?: string): Promise<RunningServer> {
  return serve({
    name: "interop",
    services: [{ service: LeanVerifierService, impl: interopVerifier }],
    config: {
      limits: { read_max_bytes: 1 << 20, write_max_bytes: 1 << 20, max_concurrent_calls: 64, max_timeout_ms: 60_000 },
      shutdown: { drain_delay_ms: 0, grace_period_ms: 1_000 },
      ...(auth ? { auth: { token: auth } } : {}),
    },
  });
}

/** Repository root, for proto paths and scripts. */
export const repoRoot = new URL("../../", import.meta.url).pathname;
