// Baseline: the same five service implementations on a plain @grpc/grpc-js server, through
// the bench's least adapter (grpc-js-service-handlers.ts). Usage: grpc-js-services-server.ts
// SETUP-JSON; prints its port once serving.
import * as grpc from "@grpc/grpc-js";
import { grpcJsServiceHandlers } from "./grpc-js-service-handlers.js";
import { protobufServiceDefinition } from "./protobuf-service-definition.js";
import { serviceStandIns, type StandInSetup } from "./service-stand-ins.js";

const setup = JSON.parse(process.argv[2]!) as StandInSetup;
const registrations = serviceStandIns(setup);
const server = new grpc.Server();
for (const { service, impl } of registrations) server.addService(protobufServiceDefinition(service), grpcJsServiceHandlers(service, impl));
const port = await new Promise<number>((resolve, reject) =>
  server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
);
console.log(port);
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    server.forceShutdown();
    // What the services own (the verifier's REPL workers) goes with them.
    void Promise.allSettled(registrations.map((registration) => registration.close?.())).finally(() => process.exit(0));
  });
}
