// A typed client for one service whose calls are spread over its replicas.
import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client } from "@connectrpc/connect";
import { createBalancedTransport, type BalancedTransport, type BalancedTransportOptions } from "./balanced-transport.js";

export interface ServiceClient<T extends DescService> {
  client: Client<T>;
  /** Kept alongside the client for endpoints(), stats() and close(). */
  transport: BalancedTransport;
}

export function createServiceClient<T extends DescService>(service: T, options: BalancedTransportOptions): ServiceClient<T> {
  const transport = createBalancedTransport(options);
  return { client: createClient(service, transport), transport };
}
