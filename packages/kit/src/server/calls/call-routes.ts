// What the admission of a call needs to know of its path, computed once per method
// when the server starts: its service, whether it streams, and which budget it draws on.
import type { DescService } from "@bufbuild/protobuf";

/**
 * The budget a call draws on: its service's own slots, or one of the small budgets
 * of the services open without a token (health checks, health watches, reflection).
 */
export type CallBudget = "service" | "health-check" | "health-watch" | "reflection";

export interface CallRoute {
  service: string;
  method: string;
  /** Either side streams. */
  streaming: boolean;
  budget: CallBudget;
}

const HEALTH = "grpc.health.v1.Health";
const REFLECTION = new Set(["grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]);

/** Services callable without a token: probes need health, and reflection describes only the public contract. */
export const OPEN_SERVICES: ReadonlySet<string> = new Set([HEALTH, ...REFLECTION]);

/** Every method served, by HTTP path ("/pkg.Service/Method"). */
export function callRoutes(services: readonly DescService[]): Map<string, CallRoute> {
  const routes = new Map<string, CallRoute>();
  for (const service of services) {
    for (const method of service.methods) {
      routes.set(`/${service.typeName}/${method.name}`, {
        service: service.typeName,
        method: method.name,
        streaming: method.methodKind !== "unary",
        budget: budgetOf(service.typeName, method.methodKind !== "unary"),
      });
    }
  }
  return routes;
}

function budgetOf(service: string, streaming: boolean): CallBudget {
  if (service === HEALTH) return streaming ? "health-watch" : "health-check";
  if (REFLECTION.has(service)) return "reflection";
  return "service";
}
