// Load generator for bench/verifier: a @grpc/grpc-js client (as in bench/rpc) in its
// own process that keeps `concurrency` Verify calls in flight for `seconds` after a
// warm-up, and prints one JSON line: calls, errors, calls/s, latency percentiles as
// the client saw them, and p50s of the service's own timings from the responses.
// Usage: tsx bench/verifier/load.ts <url> <concurrency> <seconds> [warmupSeconds]
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Verdict, VerifyRequestSchema, VerifyResponseSchema, type VerifyResponse } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { BENCH_REQUEST } from "./bench-request.js";
import { percentile } from "../support/percentile.js";
import { loadResult } from "../support/load-result.js";

const [url = "http://127.0.0.1:50052", concurrencyArg = "1", secondsArg = "3", warmupArg = "1"] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const request = create(VerifyRequestSchema, BENCH_REQUEST);
const client = new grpc.Client(url.replace(/^http:\/\//, ""), grpc.credentials.createInsecure());

function verify(): Promise<VerifyResponse> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      "/leangrpo.v1.LeanVerifierService/Verify",
      (message: typeof request) => Buffer.from(toBinary(VerifyRequestSchema, message)),
      (bytes: Buffer) => fromBinary(VerifyResponseSchema, bytes),
      request,
      new grpc.Metadata(),
      { deadline: Date.now() + 30_000 },
      (error, response) => (error ? reject(error) : resolve(response!)),
    );
  });
}

async function phase(durationMs: number) {
  const latencies: number[] = [];
  const serviceTotals: number[] = [];
  const serviceOwn: number[] = [];
  let errors = 0;
  const end = performance.now() + durationMs;
  const caller = async () => {
    while (performance.now() < end) {
      const started = performance.now();
      try {
        const response = await verify();
        if (response.verdict !== Verdict.PROVED) throw new Error(`verdict ${Verdict[response.verdict]}: ${response.reason}`);
        latencies.push(performance.now() - started);
        serviceTotals.push(response.timings!.totalMs);
        serviceOwn.push(response.timings!.totalMs - response.timings!.leanMs);
      } catch (error) {
        if (errors++ === 0) process.stderr.write(`load: ${String(error)}\n`);
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, caller));
  return { latencies, serviceTotals, serviceOwn, errors, elapsedMs: performance.now() - started };
}

await phase(Number(warmupArg) * 1000);
const { latencies, serviceTotals, serviceOwn, errors, elapsedMs } = await phase(Number(secondsArg) * 1000);
for (const list of [latencies, serviceTotals, serviceOwn]) list.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    ...loadResult(concurrency, latencies, errors, elapsedMs),
    // Inside the service: the whole request, and the part that is not waiting on the REPL.
    serviceTotalP50Ms: percentile(serviceTotals, 50),
    serviceOwnP50Ms: percentile(serviceOwn, 50),
  }),
);
client.close();
