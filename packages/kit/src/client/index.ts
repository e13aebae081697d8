export {
  createBalancedTransport,
  type BalancedTransport,
  type BalancedTransportOptions,
  type Replica,
  type ReplicaRecovery,
} from "./balanced-transport.js";
export { createServiceClient, type ServiceClient } from "./create-service-client.js";
export { broadcast, replicaClients, type ReplicaClient } from "./fan-out.js";
export type { RetryOptions } from "./backoff.js";
export type { Lookup } from "./dns-resolver.js";
export type { EndpointStats } from "./endpoint-pool.js";
export { clientTarget, ServiceTargetSchema } from "./service-target.js";
export { isReplicaUnreachable, ReplicaAffinity, replicaUnreachable } from "./replica-affinity.js";
