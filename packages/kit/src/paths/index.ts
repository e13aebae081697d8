export { PathRoot, PathError, type PathRootOptions } from "./path-root.js";
export { RootDirectory, type DirectoryEntry, type EntryKind, type FreshDirectory, type OpenedFile } from "./root-directory.js";
export { checkSafeName, isSafeName } from "./safe-name.js";
export { pathErrorToConnect } from "./path-error-status.js";
