// The backend of an inference service given no model: it starts (so `serve all`
// works anywhere) and answers every model call with what to configure.
import { Code, ConnectError } from "@connectrpc/connect";
import type { InferenceBackend } from "./inference-backend.js";

export function unconfiguredBackend(): InferenceBackend {
  const fail = async (): Promise<never> => {
    throw new ConnectError(
      "no model configured: set vllm.url (a vLLM server) or embedded.model_dir (a Hugging Face model directory for the tfjs sampler)",
      Code.FailedPrecondition,
    );
  };
  return {
    name: "embedded",
    baseModel: fail,
    tokenize: fail,
    detokenize: fail,
    generate: fail,
    // biome-ignore lint/correctness/useYield: a stream that fails before its first item, like every call here
    async *generateStream() {
      await fail();
    },
    loadAdapter: fail,
    unloadAdapter: fail,
    healthy: async () => true,
  };
}
