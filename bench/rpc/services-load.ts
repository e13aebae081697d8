// The client of bench/rpc/services.ts: a @grpc/grpc-js client in its own process that stays
// up for the whole run (a process per turn would cost more than some turns) and makes one
// call at a time, turn after turn, as the parent asks on stdin, one JSON line a turn:
//   {"target": "127.0.0.1:PORT", "call": "Verify", "warmupCalls": 1, "seconds": 3, "minCalls": 3}
// It answers "measuring" once the warm-up calls are done, then one JSON line: the turn's
// calls, errors (with the first one's message), each call's latency from request to status,
// and for server streams its latency to the first message and the messages received.
// Usage: tsx bench/rpc/services-load.ts CALL-SETUP-JSON
import { createInterface } from "node:readline";
import type { Message } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { loadResult, type LoadResult } from "../support/load-result.js";
import { protobufMethodDefinition } from "./protobuf-service-definition.js";
import { serviceCalls, type CallSetup, type ServiceCall } from "./service-calls.js";

export interface TurnRequest {
  target: string;
  call: string;
  warmupCalls: number;
  /** Calls go on until this much time has passed and at least minCalls were made. */
  seconds: number;
  minCalls: number;
}

export type TurnResult = LoadResult & {
  /** Each measured call's latency, in call order (the parent pools them across turns). */
  latenciesMs: number[];
  elapsedMs: number;
  firstError?: string;
  /** Server streams: each call's latency to its first message, and the messages of all calls. */
  firstMessageMs?: number[];
  messages?: number;
};

const DEADLINE_MS = 120_000;

interface Timed {
  totalMs: number;
  firstMessageMs: number;
  responses: Message[];
}

const calls = new Map(serviceCalls(JSON.parse(process.argv[2]!) as CallSetup).map((call) => [call.name, call]));
const clients = new Map<string, grpc.Client>();

function clientFor(target: string): grpc.Client {
  let client = clients.get(target);
  if (!client) {
    client = new grpc.Client(target, grpc.credentials.createInsecure());
    clients.set(target, client);
  }
  return client;
}

/** One call, timed from the request to the status, its responses checked. */
function callOnce(client: grpc.Client, call: ServiceCall): Promise<Timed> {
  const { path, requestSerialize, responseDeserialize } = protobufMethodDefinition(call.method);
  const options = { deadline: Date.now() + DEADLINE_MS };
  const start = performance.now();
  const responses: Message[] = [];
  let firstMessageMs = Number.NaN;
  const received = (response: unknown) => {
    if (responses.length === 0) firstMessageMs = performance.now() - start;
    responses.push(response as Message);
  };
  return new Promise<Timed>((resolve, reject) => {
    const settle = (error: grpc.ServiceError | null) => {
      if (error) return reject(error);
      const totalMs = performance.now() - start;
      try {
        call.check(responses);
        resolve({ totalMs, firstMessageMs, responses });
      } catch (failed) {
        reject(failed);
      }
    };
    const unary = (error: grpc.ServiceError | null, response?: unknown) => {
      if (!error) received(response);
      settle(error);
    };
    const metadata = new grpc.Metadata();
    switch (call.method.methodKind) {
      case "unary":
        client.makeUnaryRequest(path, requestSerialize, responseDeserialize, call.requests[0], metadata, options, unary);
        return;
      case "client_streaming": {
        const stream = client.makeClientStreamRequest(path, requestSerialize, responseDeserialize, metadata, options, unary);
        for (const request of call.requests) stream.write(request);
        stream.end();
        return;
      }
      case "server_streaming": {
        const stream = client.makeServerStreamRequest(path, requestSerialize, responseDeserialize, call.requests[0], metadata, options);
        // Done once every message is read ("end") and the status is in ("status"), whichever comes last.
        let pending = 2;
        const done = () => --pending === 0 && settle(null);
        stream.on("data", received);
        stream.on("end", done);
        stream.on("status", (status: grpc.StatusObject) => status.code === grpc.status.OK && done());
        stream.on("error", (error: grpc.ServiceError) => settle(error));
        return;
      }
      case "bidi_streaming":
        reject(new Error(`${call.name}: bidi calls are not benchmarked`));
    }
  });
}

async function turn(request: TurnRequest): Promise<TurnResult> {
  const call = calls.get(request.call);
  if (!call) throw new Error(`unknown call ${request.call}; known: ${[...calls.keys()].join(", ")}`);
  const client = clientFor(request.target);
  let firstError: string | undefined;
  let errors = 0;
  for (let i = 0; i < request.warmupCalls; i++) {
    await callOnce(client, call).catch((error: unknown) => {
      errors++;
      firstError ??= `warm-up: ${(error as Error).message}`;
    });
  }
  console.log("measuring");
  const timed: Timed[] = [];
  const start = performance.now();
  const end = start + request.seconds * 1000;
  while (performance.now() < end || timed.length + errors < request.minCalls) {
    try {
      timed.push(await callOnce(client, call));
    } catch (error) {
      errors++;
      firstError ??= (error as Error).message;
    }
  }
  const elapsedMs = performance.now() - start;
  const latenciesMs = timed.map((t) => t.totalMs);
  const result: TurnResult = {
    ...loadResult(
      1,
      [...latenciesMs].sort((a, b) => a - b),
      errors,
      elapsedMs,
    ),
    latenciesMs,
    elapsedMs,
  };
  if (firstError !== undefined) result.firstError = firstError;
  if (call.method.methodKind === "server_streaming") {
    result.firstMessageMs = timed.map((t) => t.firstMessageMs);
    result.messages = timed.reduce((sum, t) => sum + t.responses.length, 0);
  }
  return result;
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === "") continue;
  console.log(JSON.stringify(await turn(JSON.parse(line) as TurnRequest)));
}
for (const client of clients.values()) client.close();
