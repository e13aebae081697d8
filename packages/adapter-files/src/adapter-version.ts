// An adapter is identified by its policy version (1, 2, ...; 0 is the base model); its name
// is derived from the version in artifact-names.ts. The contract carries versions as uint64
// (bigint); code holds them as numbers, and the two meet in the functions below.

/** A version that is not a non-negative safe integer. */
export class AdapterVersionError extends RangeError {
  override readonly name = "AdapterVersionError";
}

/** A version as the contract carries it (uint64). */
export function versionToProto(version: number): bigint {
  return BigInt(checkedVersion(version));
}

/** A version from the contract; versions beyond 2^53 - 1 cannot be held and are refused. */
export function versionFromProto(version: bigint): number {
  if (version < 0n || version > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new AdapterVersionError(`adapter version ${version} is out of range: versions are integers from 0 to ${Number.MAX_SAFE_INTEGER}`);
  }
  return Number(version);
}

export function checkedVersion(version: number): number {
  if (!Number.isSafeInteger(version) || version < 0) {
    throw new AdapterVersionError(`adapter version ${version} is not a non-negative integer`);
  }
  return version;
}
