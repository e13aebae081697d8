// n completions per problem in Generate calls of at most the inference service's max_n:
// an evaluation at pass@32 with 64 samples runs on a server that takes 16 per call. Each
// call after the first gets a seed of its own, so the chunks are not copies of each other.
import { Code, ConnectError } from "@connectrpc/connect";
import type { MeshClients } from "../run/mesh-clients.js";

/** What a server that does not report its limit accepts: the inference service's default limits.max_n. */
export const DEFAULT_MAX_N = 64;

export interface SampleChunk {
  /** 0 for the first call. */
  index: number;
  n: number;
  /** This call's seed from the problem's: the problem's own for the first chunk. */
  seed(problemSeed: number): number;
}

export function sampleChunks(samples: number, maxN: number): SampleChunk[] {
  if (!Number.isInteger(maxN) || maxN < 1) throw new RangeError(`max_n must be a positive integer, got ${maxN}`);
  const chunks: SampleChunk[] = [];
  for (let start = 0, index = 0; start < samples; start += maxN, index++) {
    const chunk = index;
    chunks.push({
      index: chunk,
      n: Math.min(maxN, samples - start),
      // The golden-ratio step spreads consecutive chunks' seeds over the 32-bit range.
      seed: (problemSeed) => (chunk === 0 ? problemSeed : (problemSeed + Math.imul(chunk, 0x9e3779b9)) >>> 0),
    });
  }
  return chunks;
}

/** The largest n one Generate accepts, as the inference service reports it (ListModels max_n). */
export async function generateLimit(clients: Pick<MeshClients, "inference" | "withRetry">, signal?: AbortSignal): Promise<number> {
  const models = await clients.withRetry("inference", () => clients.inference.listModels({}, { signal }), signal);
  if (models.maxN === 0) return DEFAULT_MAX_N;
  if (models.maxN < 1) throw new ConnectError(`the inference service reports max_n ${models.maxN}`, Code.Internal);
  return models.maxN;
}
