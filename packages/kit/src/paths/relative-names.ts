// A path given relative to a root, checked by its text alone before anything touches the
// disk: not empty, no NUL, not absolute, no `..` segment (with either slash). Its names are
// what the walk opens one at a time (root-directory.ts); "." and empty segments drop out.
import path from "node:path";
import { PathError } from "./path-error.js";

export function relativeNames(given: string, field: string, key: string): string[] {
  if (given === "") throw new PathError(`${field} is empty; give a path relative to ${key}`, field, "invalid");
  if (given.includes("\0")) throw new PathError(`${field} holds a NUL character`, field, "invalid");
  if (path.isAbsolute(given) || /^[A-Za-z]:[\\/]/.test(given))
    throw new PathError(`${field} "${given}" is absolute; give a path relative to ${key}`, field, "invalid");
  if (given.split(/[\\/]/).includes(".."))
    throw new PathError(`${field} "${given}" contains "..": paths stay inside ${key}`, field, "invalid");
  return given.split("/").filter((name) => name !== "" && name !== ".");
}
