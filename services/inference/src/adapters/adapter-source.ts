// An adapter directory the service checked under adapters.dir, as a backend receives it.
// The check and the read must see the same files: a backend in this process reads them
// through `read`, which walks from adapters.dir to the adapter and opens each file from the
// directory held open (kit/paths), so a component swapped for a symlink after the check is
// refused, not followed. Only a backend in another process (vLLM) is given the path itself;
// docs/guide/security.md says what the operator must guarantee about adapters.dir for it.
import { PathError, type PathRoot } from "@lean-grpo/kit";
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, REASONING_MAP_FILE } from "@lean-grpo/lm";

/** The files an adapter may hold that a backend reads; null where it has none. */
export interface AdapterFileBytes {
  config: Buffer | null;
  weights: Buffer | null;
  reasoningMap: Buffer | null;
}

export interface AdapterSource {
  /** Its absolute path, for a backend that must be given a path (another process). */
  readonly dir: string;
  /** Its files, read through the walk from adapters.dir. */
  read(): Promise<AdapterFileBytes>;
}

/** The adapter at `relative` under `root` (adapters.dir); `field` names the request field that chose it. */
export function adapterSource(root: PathRoot, relative: string, field: string): AdapterSource {
  return {
    dir: root.resolve(relative, field),
    read: () =>
      root.withDirectory(relative, field, {}, async (adapter) => {
        const optional = (file: string) =>
          adapter.readBytes(file, Number.MAX_SAFE_INTEGER).catch((error: unknown) => {
            if (error instanceof PathError && error.code === "missing") return null;
            throw error;
          });
        return {
          config: await optional(ADAPTER_CONFIG_FILE),
          weights: await optional(ADAPTER_WEIGHTS_FILE),
          reasoningMap: await optional(REASONING_MAP_FILE),
        };
      }),
  };
}
