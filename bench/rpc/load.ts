// Load generator for bench/rpc: a @grpc/grpc-js client in its own process that keeps
// `concurrency` unary calls in flight for `seconds` and prints one JSON line of results.
// Usage: tsx bench/rpc/load.ts <host:port> <concurrency> <seconds> [warmupSeconds] [announce]
// With "announce", it first prints the line "measuring" when the measured phase starts.
import * as grpc from "@grpc/grpc-js";
import { create, toBinary, fromBinary } from "@bufbuild/protobuf";
import { TokenizeRequestSchema, TokenizeResponseSchema } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { loadResult } from "../support/load-result.js";

const [target = "127.0.0.1:50051", concArg = "1", secArg = "5", warmArg = "1", announce] = process.argv.slice(2);
const concurrency = Number(concArg);
const seconds = Number(secArg);
const warmup = Number(warmArg);

const path = "/leangrpo.v1.InferenceService/Tokenize";
const request = create(TokenizeRequestSchema, {
  prompt: { kind: { case: "text", value: "theorem add_zero (n : Nat) : n + 0 = n := by simp" } },
});
const client = new grpc.Client(target, grpc.credentials.createInsecure());

function call(): Promise<void> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      path,
      (m: typeof request) => Buffer.from(toBinary(TokenizeRequestSchema, m)),
      (b: Buffer) => fromBinary(TokenizeResponseSchema, b),
      request,
      new grpc.Metadata(),
      { deadline: Date.now() + 10_000 },
      (err) => (err ? reject(err) : resolve()),
    );
  });
}

async function phase(durationMs: number, record: boolean) {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + durationMs;
  async function worker() {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        await call();
        if (record) latencies.push(performance.now() - t0);
      } catch {
        errors++;
      }
    }
  }
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latencies, errors, elapsedMs: performance.now() - t0 };
}

await phase(warmup * 1000, false);
if (announce === "announce") console.log("measuring");
const { latencies, errors, elapsedMs } = await phase(seconds * 1000, true);
latencies.sort((a, b) => a - b);
console.log(JSON.stringify(loadResult(concurrency, latencies, errors, elapsedMs)));
client.close();
