// Baseline: a plain @grpc/grpc-js server running the benchmark handler. Prints its port.
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { TokenizeRequestSchema, TokenizeResponseSchema, type TokenizeRequest } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { tokenize } from "./tokenize-handler.js";

const server = new grpc.Server();
server.addService(
  {
    tokenize: {
      path: "/leangrpo.v1.InferenceService/Tokenize",
      requestStream: false,
      responseStream: false,
      requestSerialize: (m: TokenizeRequest) => Buffer.from(toBinary(TokenizeRequestSchema, m)),
      requestDeserialize: (b: Buffer) => fromBinary(TokenizeRequestSchema, b),
      responseSerialize: (m: ReturnType<typeof tokenize>) =>
        Buffer.from(toBinary(TokenizeResponseSchema, create(TokenizeResponseSchema, m))),
      responseDeserialize: (b: Buffer) => fromBinary(TokenizeResponseSchema, b),
    },
  },
  {
    tokenize: (call: grpc.ServerUnaryCall<TokenizeRequest, unknown>, callback: grpc.sendUnaryData<unknown>) =>
      callback(null, tokenize(call.request)),
  },
);
server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  console.log(port);
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    server.forceShutdown();
    process.exit(0);
  });
}
