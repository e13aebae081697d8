// A name that becomes one directory or file name on the server (a run id, an adapter name):
// letters, digits, ".", "_" and "-", not starting with "." (so never "." or ".."), at most
// 128 characters. Checked by every RPC that takes one, before it touches the disk.
import { PathError } from "./path-error.js";

const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

export function isSafeName(name: string): boolean {
  return SAFE_NAME.test(name);
}

/** Throws a PathError naming `field` unless `name` is a safe single path segment. */
export function checkSafeName(name: string, field: string): string {
  if (name === "") throw new PathError(`${field} is empty`, field, "invalid");
  if (!SAFE_NAME.test(name))
    throw new PathError(
      `${field} ${JSON.stringify(name.slice(0, 140))} is not accepted: use 1-128 letters, digits, ".", "_" and "-", not starting with "."`,
      field,
      "invalid",
    );
  return name;
}
