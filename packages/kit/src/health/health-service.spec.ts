import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { afterAll, describe, expect, it } from "vitest";
import { createHealthService, HealthRegistry } from "./health-service.js";

const VERIFIER = "leangrpo.v1.LeanVerifierService";

// Streams are ended through a signal: returning from the client's iterator does not
// cancel the call on the server.
const cancel = new AbortController();
afterAll(() => cancel.abort());

function clientFor(registry: HealthRegistry) {
  const { service, impl } = createHealthService(registry);
  return createClient(
    Health,
    createRouterTransport((router) => router.service(service, impl)),
  );
}

describe("health", () => {
  it("checks registered services and the server as a whole", async () => {
    const registry = new HealthRegistry([VERIFIER]);
    const client = clientFor(registry);
    expect((await client.check({ service: "" })).status).toBe(ServingStatus.SERVING);
    registry.set(VERIFIER, ServingStatus.NOT_SERVING);
    expect((await client.check({ service: VERIFIER })).status).toBe(ServingStatus.NOT_SERVING);
    expect(registry.get(VERIFIER)).toBe(ServingStatus.NOT_SERVING);
  });

  it("fails Check for an unknown service with NOT_FOUND", async () => {
    const client = clientFor(new HealthRegistry());
    const error = await client.check({ service: "nope" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.NotFound);
  });

  it("lists every status", async () => {
    const registry = new HealthRegistry([VERIFIER]);
    registry.set("other", ServingStatus.NOT_SERVING);
    const { statuses } = await clientFor(registry).list({});
    expect(Object.fromEntries(Object.entries(statuses).map(([name, r]) => [name, r.status]))).toEqual({
      "": ServingStatus.SERVING,
      [VERIFIER]: ServingStatus.SERVING,
      other: ServingStatus.NOT_SERVING,
    });
  });

  it("setAll changes every known service, the server included", () => {
    const registry = new HealthRegistry([VERIFIER]);
    registry.setAll(ServingStatus.NOT_SERVING);
    expect([registry.get(""), registry.get(VERIFIER)]).toEqual([ServingStatus.NOT_SERVING, ServingStatus.NOT_SERVING]);
  });

  it("watch sends the current status, then each change", async () => {
    const registry = new HealthRegistry([VERIFIER]);
    const stream = clientFor(registry).watch({ service: VERIFIER }, { signal: cancel.signal })[Symbol.asyncIterator]();
    expect((await stream.next()).value?.status).toBe(ServingStatus.SERVING);
    registry.set(VERIFIER, ServingStatus.NOT_SERVING);
    expect((await stream.next()).value?.status).toBe(ServingStatus.NOT_SERVING);
  });

  it("watch of an unknown service says SERVICE_UNKNOWN and waits for it to appear", async () => {
    const registry = new HealthRegistry();
    const stream = clientFor(registry).watch({ service: "later" }, { signal: cancel.signal })[Symbol.asyncIterator]();
    expect((await stream.next()).value?.status).toBe(ServingStatus.SERVICE_UNKNOWN);
    registry.set("later", ServingStatus.SERVING);
    expect((await stream.next()).value?.status).toBe(ServingStatus.SERVING);
  });

  it("shutdown ends watch streams with NOT_SERVING last and freezes the statuses", async () => {
    const registry = new HealthRegistry([VERIFIER]);
    const client = clientFor(registry);
    const stream = client.watch({ service: "" })[Symbol.asyncIterator]();
    expect((await stream.next()).value?.status).toBe(ServingStatus.SERVING);
    const rest = (async () => {
      const statuses: ServingStatus[] = [];
      for (let r = await stream.next(); !r.done; r = await stream.next()) statuses.push(r.value.status);
      return statuses;
    })();
    registry.shutdown();
    expect(await rest).toEqual([ServingStatus.NOT_SERVING]);

    registry.set(VERIFIER, ServingStatus.SERVING);
    expect((await client.check({ service: VERIFIER })).status).toBe(ServingStatus.NOT_SERVING);
    const late = [];
    for await (const r of client.watch({ service: VERIFIER })) late.push(r.status);
    expect(late).toEqual([ServingStatus.NOT_SERVING]);
  });

  it("stops a watch when the client cancels it, and later changes still reach others", async () => {
    const registry = new HealthRegistry([VERIFIER]);
    const client = clientFor(registry);
    const abort = new AbortController();
    const cancelled = client.watch({ service: VERIFIER }, { signal: abort.signal })[Symbol.asyncIterator]();
    await cancelled.next();
    abort.abort();
    const error = await cancelled.next().catch((e: unknown) => e);
    expect(ConnectError.from(error).code).toBe(Code.Canceled);

    const other = client.watch({ service: VERIFIER }, { signal: cancel.signal })[Symbol.asyncIterator]();
    await other.next();
    registry.set(VERIFIER, ServingStatus.NOT_SERVING);
    expect((await other.next()).value?.status).toBe(ServingStatus.NOT_SERVING);
  });
});
