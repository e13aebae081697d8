// File paths in a transfer are relative to the adapter directory; a path that could
// name anything outside it (absolute, "..", a drive, a NUL) is refused on both sides.
import path from "node:path";
import { AdapterTransferError } from "./adapter-transfer-error.js";

/** The path, normalised (posix separators, no "." segments); throws if it could leave its directory. */
export function safeRelativePath(file: string): string {
  const segments = file.split(/[\\/]/);
  const escapes =
    file === "" ||
    file.includes("\0") ||
    path.posix.isAbsolute(file) ||
    path.win32.isAbsolute(file) ||
    /^[A-Za-z]:/.test(file) ||
    segments.includes("..");
  const normalized = escapes ? "" : path.posix.normalize(segments.join("/"));
  if (escapes || normalized === "." || normalized.endsWith("/")) {
    throw new AdapterTransferError(`file path "${file}" must be relative and stay inside the adapter directory`, "invalid");
  }
  return normalized;
}
