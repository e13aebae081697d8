// Why a path under a root was refused. Every message names the field (the request field or
// config key the path came from) and the path relative to the root, never where a symlink
// points and never anything read from a file or a directory.

/** Why a client-given path was refused; `code` says which status answers it. */
export class PathError extends Error {
  override readonly name = "PathError";
  constructor(
    message: string,
    /** The request field or config key the path came from. */
    readonly field: string,
    /** invalid: a malformed or escaping path (INVALID_ARGUMENT); missing: nothing there (NOT_FOUND); too_large: over the cap (RESOURCE_EXHAUSTED). */
    readonly code: "invalid" | "missing" | "too_large",
  ) {
    super(message);
  }
}

/** What a refusal says about one path: `shown` is relative to the root whose config key is `key`. */
export interface PathPlace {
  field: string;
  key: string;
  shown: string;
}

export function symlinkRefused({ field, key, shown }: PathPlace): PathError {
  return new PathError(`${field} "${shown}" is a symlink; symlinks inside ${key} are refused`, field, "invalid");
}

export function missing({ field, key, shown }: PathPlace): PathError {
  return new PathError(`${field} "${shown}" does not exist under ${key}`, field, "missing");
}

export function notDirectory({ field, shown }: PathPlace): PathError {
  return new PathError(`${field} "${shown}" is not a directory`, field, "invalid");
}

export function notRegular({ field, shown }: PathPlace): PathError {
  return new PathError(`${field} "${shown}" is not a regular file (a directory, FIFO or device is refused)`, field, "invalid");
}

export function hardLinked({ field, shown }: PathPlace): PathError {
  return new PathError(`${field} "${shown}" has other hard links; a file written here must have none`, field, "invalid");
}

export function tooLarge({ field, shown }: PathPlace, maxBytes: number): PathError {
  return new PathError(`${field} "${shown}" is larger than ${maxBytes} bytes, the most this server reads`, field, "too_large");
}

/** A system error on a path, by its code only (ENOSPC, EACCES): the system's message may name more than the root. */
export function failed({ field, shown }: PathPlace, doing: string, error: unknown): PathError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? "error";
  return new PathError(`${field} "${shown}" cannot be ${doing} (${code})`, field, "invalid");
}

export function rootMissing(field: string, key: string): PathError {
  return new PathError(`${field}: ${key} does not exist on this server`, field, "missing");
}
