// A service that stayed unreachable through every retry: the run stops at its last
// checkpoint and says which service it lost.
export class ServiceLostError extends Error {
  constructor(
    readonly service: string,
    readonly url: string,
    cause: unknown,
  ) {
    super(`lost the ${service} service at ${url} (${cause instanceof Error ? cause.message : String(cause)})`);
    this.name = "ServiceLostError";
  }
}
