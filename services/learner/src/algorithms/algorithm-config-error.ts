// A bad algorithm name or algorithm_config value. The message names the key and what is
// accepted, so the service hands it to the caller unchanged as INVALID_ARGUMENT.
export class AlgorithmConfigError extends Error {
  override readonly name = "AlgorithmConfigError";
}
