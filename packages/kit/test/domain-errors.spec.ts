// A service's declared error mapping, applied by serve() around every call shape, on
// every protocol connect-node serves, called by real clients over loopback.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createHandlerContext, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { LeanVerifierService, Verdict, VerifyBatchRequestSchema, VerifyRequestSchema } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { LearnerService, type TrainStepRequest } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { serve, serviceRegistration, type RunningServer } from "../src/server/serve.js";
import { wrapServiceImpl } from "../src/server/calls/service-pipeline.js";

class ProofRejected extends Error {}
class StepOutOfOrder extends Error {}

type Failure = "domain" | "connect" | "bug";

const BUG_MESSAGE = "cannot read properties of undefined (reading 'env')";

/** A named frame, so the test can look for its name in what reaches the client. */
function crashInsideTheHandler(): never {
  throw new TypeError(BUG_MESSAGE);
}

function fail(failure: string, domainError: Error): never {
  if (failure === "domain") throw domainError;
  if (failure === "connect") throw new ConnectError("the handler's own status", Code.PermissionDenied, { "x-handler": "kept" });
  crashInsideTheHandler();
}

const logged: Record<string, unknown>[] = [];
let server: RunningServer;

beforeAll(async () => {
  server = await serve({
    name: "domain-errors",
    config: { shutdown: { drain_delay_ms: 0, grace_period_ms: 1_000 } },
    logger: pino({ level: "error" }, { write: (line: string) => logged.push(JSON.parse(line) as Record<string, unknown>) }),
    services: [
      // Rules form.
      serviceRegistration(
        LeanVerifierService,
        {
          verify(request) {
            fail(request.proof, new ProofRejected("proof: `sorry` is not accepted"));
          },
          async *verifyBatch(request) {
            yield { index: 0, result: { verdict: Verdict.PROVED } };
            await new Promise((resolve) => setTimeout(resolve, 10));
            fail(request.items[1]?.proof ?? "", new ProofRejected("items[1].proof: `sorry` is not accepted"));
          },
        },
        { errors: [[ProofRejected, Code.InvalidArgument]] },
      ),
      // Function form.
      serviceRegistration(
        LearnerService,
        {
          async trainStep(requests) {
            let algorithm = "";
            let samples = 0;
            for await (const message of requests) {
              if (message.part.case === "header") algorithm = message.part.value.algorithm;
              else samples++;
            }
            fail(algorithm, new StepOutOfOrder(`step ${samples} arrived before step 1`));
          },
        },
        {
          errors: (error) =>
            error instanceof StepOutOfOrder ? new ConnectError(`TrainStep: ${error.message}`, Code.FailedPrecondition) : undefined,
        },
      ),
    ],
  });
});

afterAll(async () => {
  await server?.shutdown();
});

const transports: Record<string, (baseUrl: string) => Transport> = {
  grpc: (baseUrl) => createGrpcTransport({ baseUrl }),
  connect: (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
};

async function caught(call: () => Promise<unknown>): Promise<ConnectError> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectError);
    return error as ConnectError;
  }
  throw new Error("the call succeeded; it should have failed");
}

/** Everything of an error that crosses the wire, as one string. */
function wireText(error: ConnectError): string {
  return [error.message, error.rawMessage, ...error.metadata.entries(), ...error.details.map((d) => JSON.stringify(d))].join("\n");
}

/** Each call shape, failing as `failure` says, with the status its declared mapping gives a domain error. */
const callShapes: Record<string, { domainStatus: [Code, string]; call(transport: Transport, failure: Failure): Promise<unknown> }> = {
  unary: {
    domainStatus: [Code.InvalidArgument, "proof: `sorry` is not accepted"],
    call: (transport, failure) => createClient(LeanVerifierService, transport).verify({ proof: failure }),
  },
  "server-streaming": {
    domainStatus: [Code.InvalidArgument, "items[1].proof: `sorry` is not accepted"],
    async call(transport, failure) {
      const received: number[] = [];
      try {
        for await (const response of createClient(LeanVerifierService, transport).verifyBatch({ items: [{}, { proof: failure }] })) {
          received.push(response.index);
        }
      } finally {
        // The error came mid-stream: after the first response, not instead of it.
        expect(received).toEqual([0]);
      }
    },
  },
  "client-streaming": {
    domainStatus: [Code.FailedPrecondition, "TrainStep: step 2 arrived before step 1"],
    call(transport, failure) {
      async function* requests(): AsyncGenerator<TrainStepRequest> {
        yield create(LearnerService.method.trainStep.input, { part: { case: "header", value: { algorithm: failure } } });
        for (let i = 0; i < 2; i++) yield create(LearnerService.method.trainStep.input, { part: { case: "sample", value: {} } });
      }
      return createClient(LearnerService, transport).trainStep(requests());
    },
  },
};

describe.each(Object.keys(transports).flatMap((protocol) => Object.keys(callShapes).map((shape) => [shape, protocol] as const)))(
  "%s over %s",
  (shape, protocol) => {
    const { domainStatus, call } = callShapes[shape]!;
    const transport = () => transports[protocol]!(server.url);

    it("answers a declared domain error with its code and message", async () => {
      const error = await caught(() => call(transport(), "domain"));
      expect([error.code, error.rawMessage]).toEqual(domainStatus);
    });

    it("leaves a ConnectError as the handler threw it", async () => {
      const error = await caught(() => call(transport(), "connect"));
      expect([error.code, error.rawMessage]).toEqual([Code.PermissionDenied, "the handler's own status"]);
      expect(error.metadata.get("x-handler")).toBe("kept");
    });

    it("answers an unknown error INTERNAL with its message, no stack, and logs it with the stack", async () => {
      logged.length = 0;
      const error = await caught(() => call(transport(), "bug"));
      expect([error.code, error.rawMessage]).toEqual([Code.Internal, BUG_MESSAGE]);
      expect(wireText(error)).not.toContain("crashInsideTheHandler");
      expect(wireText(error)).not.toMatch(/\bat \S+ \(/);
      const entry = logged.find((line) => line.msg === "handler failed");
      expect((entry?.err as { stack?: string } | undefined)?.stack).toContain("crashInsideTheHandler");
    });
  },
);

/** What a call ends with, whether the handler throws at once or rejects later. */
async function settled(call: () => unknown): Promise<unknown> {
  try {
    return await call();
  } catch (error) {
    return error;
  }
}

describe("the service pipeline, called directly", () => {
  function contextWith(signal: AbortSignal) {
    return createHandlerContext({
      service: LeanVerifierService,
      method: LeanVerifierService.method.verify,
      protocolName: "test",
      requestMethod: "POST",
      url: "/leangrpo.v1.LeanVerifierService/Verify",
      requestSignal: signal,
    });
  }

  it("answers an aborted call with its abort reason, whatever its work threw afterwards", async () => {
    const controller = new AbortController();
    const deadline = new ConnectError("the operation timed out", Code.DeadlineExceeded);
    controller.abort(deadline);
    const impl = wrapServiceImpl(
      LeanVerifierService,
      {
        async verify() {
          throw new ProofRejected("thrown after the deadline");
        },
      },
      { errors: [[ProofRejected, Code.InvalidArgument]] },
    );
    const error = await settled(() => impl.verify(create(VerifyRequestSchema), contextWith(controller.signal)));
    expect(ConnectError.from(error).code).toBe(Code.DeadlineExceeded);
  });

  it("does the same for a stream aborted while it is read", async () => {
    const controller = new AbortController();
    const impl = wrapServiceImpl(
      LeanVerifierService,
      {
        async *verifyBatch() {
          yield { index: 0 };
          throw new ProofRejected("thrown after the cancel");
        },
      },
      { errors: [[ProofRejected, Code.InvalidArgument]] },
    );
    const iterator = impl.verifyBatch(create(VerifyBatchRequestSchema), contextWith(controller.signal))[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual({ index: 0 });
    controller.abort(new ConnectError("the client cancelled the call", Code.Canceled));
    const error = await iterator.next().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(ConnectError.from(error).code).toBe(Code.Canceled);
  });

  it("answers an error no mapping knows INTERNAL, and reports it with its stack", async () => {
    const reported: unknown[] = [];
    const bug = new TypeError(BUG_MESSAGE);
    const impl = wrapServiceImpl(
      LeanVerifierService,
      {
        verify() {
          throw bug;
        },
      },
      { errors: [[ProofRejected, Code.InvalidArgument]], onUnmapped: (error) => reported.push(error) },
    );
    const error = await settled(() => impl.verify(create(VerifyRequestSchema), contextWith(new AbortController().signal)));
    expect([ConnectError.from(error).code, ConnectError.from(error).rawMessage]).toEqual([Code.Internal, BUG_MESSAGE]);
    expect(reported).toEqual([bug]);
  });

  it("answers UNIMPLEMENTED for a method the service lacks", async () => {
    const impl = wrapServiceImpl(LeanVerifierService, {});
    const error = await settled(() => impl.verify(create(VerifyRequestSchema), contextWith(new AbortController().signal)));
    expect(ConnectError.from(error).code).toBe(Code.Unimplemented);
  });
});
