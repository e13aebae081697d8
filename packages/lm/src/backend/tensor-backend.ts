// Chooses the tfjs backend at run time: "cpu" (pure JS, always there), "wasm" (XNNPACK,
// SIMD, one thread in Node) or "tensorflow" (libtensorflow through @tensorflow/tfjs-node or
// -gpu, optional dependencies that are not installed by default). A missing optional
// backend is reported, never fatal unless it was asked for by name.
import { createRequire } from "node:module";
import path from "node:path";
import * as tf from "@tensorflow/tfjs-core";
import "@tensorflow/tfjs-backend-cpu";
import { setWasmPaths } from "@tensorflow/tfjs-backend-wasm";
import { BackendUnavailableError } from "../errors.js";
import { filterTfjsBanner } from "./tfjs-banner-filter.js";

filterTfjsBanner();

export const BACKEND_NAMES = ["cpu", "wasm", "tensorflow"] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

export interface BackendProbe {
  name: BackendName;
  available: boolean;
  /** What was found: the package that provides it, or why it is not there. */
  detail: string;
}

export interface TensorBackend {
  name: BackendName;
  /** The package that provides it. */
  detail: string;
}

/** The optional packages that register the "tensorflow" backend, in order of preference. */
const TENSORFLOW_PACKAGES = ["@tensorflow/tfjs-node-gpu", "@tensorflow/tfjs-node"];

let wasmPathsSet = false;

function prepareWasm(): void {
  if (wasmPathsSet) return;
  // In Node the .wasm binaries are read from disk next to the package's main file.
  const main = createRequire(import.meta.url).resolve("@tensorflow/tfjs-backend-wasm");
  setWasmPaths(path.dirname(main) + path.sep);
  wasmPathsSet = true;
}

function isModuleNotFound(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND";
}

let tensorflowProbe: Promise<BackendProbe> | undefined;

/** Imports tfjs-node(-gpu) once, if installed; importing registers the "tensorflow" backend. */
function probeTensorflow(): Promise<BackendProbe> {
  tensorflowProbe ??= (async () => {
    const failures: string[] = [];
    for (const spec of TENSORFLOW_PACKAGES) {
      try {
        await import(spec);
      } catch (error) {
        failures.push(isModuleNotFound(error) ? `${spec} is not installed` : `${spec} failed to load: ${(error as Error).message}`);
        continue;
      }
      if (tf.findBackendFactory("tensorflow")) return { name: "tensorflow", available: true, detail: spec };
      failures.push(
        `${spec} loaded but registered its backend with another @tensorflow/tfjs-core copy (its version must match ${tf.version_core})`,
      );
    }
    return { name: "tensorflow", available: false, detail: failures.join("; ") };
  })();
  return tensorflowProbe;
}

/** Which backends this process can use, and why the others are missing. */
export async function probeBackends(): Promise<BackendProbe[]> {
  return [
    { name: "cpu", available: true, detail: "@tensorflow/tfjs-backend-cpu (pure JS)" },
    { name: "wasm", available: true, detail: "@tensorflow/tfjs-backend-wasm (XNNPACK, SIMD, one thread in Node)" },
    await probeTensorflow(),
  ];
}

/**
 * Makes `requested` the active tfjs backend. "auto" picks tensorflow when installed, else
 * wasm. Models must be created after this call: a model's matrix products are chosen for
 * the backend that is active when it is built.
 */
export async function useBackend(requested: BackendName | "auto"): Promise<TensorBackend> {
  if (requested !== "auto" && !(BACKEND_NAMES as readonly string[]).includes(requested)) {
    throw new BackendUnavailableError(`backend "${String(requested)}" is not known; accepted: auto, ${BACKEND_NAMES.join(", ")}`);
  }
  let name: BackendName = requested === "auto" ? "wasm" : requested;
  let detail = "";
  if (requested === "tensorflow" || requested === "auto") {
    const probe = await probeTensorflow();
    if (probe.available) {
      name = "tensorflow";
      detail = probe.detail;
    } else if (requested === "tensorflow") {
      throw new BackendUnavailableError(`backend "tensorflow" is not available: ${probe.detail}`);
    }
  }
  if (name === "wasm") prepareWasm();
  let ready: boolean;
  try {
    ready = await tf.setBackend(name);
  } catch (error) {
    throw new BackendUnavailableError(`backend "${name}" failed to start: ${(error as Error).message}`);
  }
  if (!ready) throw new BackendUnavailableError(`backend "${name}" failed to start`);
  return { name, detail: detail || (await probeBackends()).find((p) => p.name === name)!.detail };
}
