// Messages between a mesh and a service running in a worker thread (service-thread.ts).

export interface ServiceThreadRequest {
  /** A SERVICE_CATALOG name. */
  service: string;
  /** The service's config section, as flags over its schema's defaults. */
  flags: Record<string, unknown>;
}

export type ServiceThreadReply = { kind: "serving"; url: string } | { kind: "failed"; message: string } | { kind: "stopped" };

export type ServiceThreadCommand = { kind: "shutdown" };
