import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
  type HealthCheckResponseSchema,
} from "@lean-grpo/gen/grpc/health/v1/health_pb";
import { LatestValue } from "./latest-value.js";

type HealthCheckResponseInit = MessageInitShape<typeof HealthCheckResponseSchema>;

/**
 * Serving status per service name ("" is the whole server), served as grpc.health.v1
 * (https://github.com/grpc/grpc/blob/master/doc/health-checking.md).
 */
export class HealthRegistry {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly watchers = new Set<{ service: string; mailbox: LatestValue<ServingStatus> }>();
  private shutDown = false;

  readonly impl: ServiceImpl<typeof Health> = {
    check: ({ service }) => {
      const status = this.statuses.get(service);
      if (status === undefined) throw new ConnectError(`unknown service "${service}"`, Code.NotFound);
      return { status };
    },
    watch: ({ service }, { signal }) => this.watch(service, signal),
    list: () => ({
      statuses: Object.fromEntries([...this.statuses].map(([service, status]) => [service, { status }])),
    }),
  };

  constructor(services: Iterable<string> = []) {
    for (const service of ["", ...services]) this.statuses.set(service, ServingStatus.SERVING);
  }

  /**
   * Ignored after shutdown(), as in grpc-go: a draining server must not report itself
   * healthy again because some component finished late.
   */
  set(service: string, status: ServingStatus): void {
    if (this.shutDown || this.statuses.get(service) === status) return;
    this.statuses.set(service, status);
    for (const watcher of this.watchers) if (watcher.service === service) watcher.mailbox.put(status);
  }

  get(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  setAll(status: ServingStatus): void {
    for (const service of this.statuses.keys()) this.set(service, status);
  }

  /**
   * Reports NOT_SERVING everywhere, then ends every Watch stream so that open watches
   * do not hold up the graceful drain that follows.
   */
  shutdown(): void {
    this.setAll(ServingStatus.NOT_SERVING);
    this.shutDown = true;
    for (const { mailbox } of this.watchers) mailbox.close();
  }

  private async *watch(service: string, signal: AbortSignal): AsyncGenerator<HealthCheckResponseInit> {
    const watcher = { service, mailbox: new LatestValue<ServingStatus>() };
    // An unknown service is not an error for Watch: it may be registered later.
    watcher.mailbox.put(this.statuses.get(service) ?? ServingStatus.SERVICE_UNKNOWN);
    if (this.shutDown) watcher.mailbox.close();
    this.watchers.add(watcher);
    const stop = () => watcher.mailbox.close();
    signal.addEventListener("abort", stop, { once: true });
    if (signal.aborted) stop();
    try {
      let sent: ServingStatus | undefined;
      for await (const status of watcher.mailbox) {
        // The mailbox keeps only the newest value, so a quick flip and flip back would
        // otherwise resend the status this watcher already has.
        if (status !== sent) yield { status };
        sent = status;
      }
    } finally {
      signal.removeEventListener("abort", stop);
      this.watchers.delete(watcher);
    }
  }
}

export function createHealthService(registry: HealthRegistry): {
  service: typeof Health;
  impl: ServiceImpl<typeof Health>;
} {
  return { service: Health, impl: registry.impl };
}
