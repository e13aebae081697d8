// The CLI's own files, as the orchestrator it starts here reads them. That orchestrator's
// data_root is the directory the CLI was started in (its default, "."), so a dataset, eval
// data, adapter or checkpoint given on the command line is sent relative to it, and one
// outside it is refused here, before any service starts, with what to do instead.
import path from "node:path";

/** `file` (as typed: relative to the working directory, or absolute) relative to `dataRoot` (default: the working directory). */
export function rootRelative(file: string, what: string, dataRoot?: string): string {
  const root = path.resolve(dataRoot ?? ".");
  const relative = path.relative(root, path.resolve(file));
  if (relative === "" || relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative))
    throw new Error(
      `${what} ${file} is outside ${root}, the directory the services started here read files under (their data_root): run lean-grpo from a directory that holds it, or copy it there`,
    );
  return relative;
}
