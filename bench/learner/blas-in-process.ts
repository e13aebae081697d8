// Which BLAS a running process has loaded, read from /proc/<pid>/maps. Debian's torch links
// libblas.so.3, which the alternatives system points at OpenBLAS or at the reference BLAS;
// torch.__config__.show() names only what it was built against, so the mapped file decides.
// With the reference BLAS torch is ~5x slower than tfjs-wasm (../shared/reference/torch-learner.md),
// and a tfjs/torch ratio then says nothing about PyTorch.
import { readFileSync } from "node:fs";

export type BlasKind = "openblas" | "mkl" | "reference" | "unknown";

export interface LoadedBlas {
  kind: BlasKind;
  /** The BLAS-like libraries mapped into the process. */
  libraries: string[];
  /** Set when the ratio to this process misleads. */
  warning?: string;
}

export function blasInProcess(pid: number): LoadedBlas {
  let maps: string;
  try {
    maps = readFileSync(`/proc/${pid}/maps`, "utf8");
  } catch (error) {
    return { kind: "unknown", libraries: [], warning: `cannot read /proc/${pid}/maps: ${(error as Error).message}` };
  }
  const libraries = [
    ...new Set(
      maps
        .split("\n")
        .map((line) => line.split(/\s+/)[5] ?? "")
        .filter((file) => /lib(open)?blas|libmkl|libcblas|libblis/.test(file)),
    ),
  ].sort();
  const kind: BlasKind = libraries.some((f) => /openblas/.test(f))
    ? "openblas"
    : libraries.some((f) => /libmkl/.test(f))
      ? "mkl"
      : libraries.some((f) => /libblas\.so/.test(f))
        ? "reference"
        : "unknown";
  const warning =
    kind === "reference"
      ? "torch runs on the reference BLAS (netlib libblas): ~5x slower than with OpenBLAS, so the ts/torch ratio misleads; apt-get install libopenblas0-pthread"
      : kind === "unknown"
        ? "no BLAS library is mapped (static or not yet loaded); the ratio cannot be judged"
        : undefined;
  return { kind, libraries, ...(warning ? { warning } : {}) };
}
