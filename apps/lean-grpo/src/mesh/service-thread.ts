// Runs one catalog service in a worker thread of this process, on its own loopback port.
//
// Why: the tfjs wasm backend runs on one thread in Node, so a mesh whose services all
// share the main thread uses one core however many there are: generation and training
// take turns. A worker thread has its own module graph, hence its own tfjs and wasm
// instance, and runs on another core; the services still talk over real gRPC on
// loopback, exactly as in a deployment. A thread, not a child process: it dies with the
// process whatever signal ends it, so nothing is left holding a port.
import type { EventLoopUtilization } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import type { ServiceThreadReply, ServiceThreadRequest } from "./service-thread-protocol.js";

export interface ThreadedServer {
  url: string;
  /** Drains and closes the server in the thread, then ends the thread. */
  shutdown(): Promise<void>;
  /** The thread's event-loop utilisation since it started (or since `since`): its busy share. */
  eventLoopUtilization(since?: EventLoopUtilization): EventLoopUtilization;
}

const ENTRY = new URL("./service-thread-entry.mjs", import.meta.url);

/** Starts `service` (a SERVICE_CATALOG name) with `flags` (its config section) in a new thread. */
export function startServiceThread(service: string, flags: Record<string, unknown>): Promise<ThreadedServer> {
  const request: ServiceThreadRequest = { service, flags };
  const worker = new Worker(ENTRY, { workerData: request, stdout: false, stderr: false });
  return new Promise<ThreadedServer>((resolve, reject) => {
    const failed = (error: Error) => {
      void worker.terminate();
      reject(error);
    };
    worker.once("error", failed);
    worker.once("exit", (code) => failed(new Error(`the ${service} thread exited (code ${code}) before it was serving`)));
    worker.once("message", (reply: ServiceThreadReply) => {
      worker.removeAllListeners("exit");
      worker.removeAllListeners("error");
      if (reply.kind !== "serving") return failed(new Error(reply.kind === "failed" ? reply.message : `unexpected reply ${reply.kind}`));
      // An error after start-up (a crash in the thread) surfaces as the process's, not silently.
      worker.on("error", (error) => {
        process.emitWarning(`the ${service} thread failed: ${error.message}`);
      });
      resolve({
        url: reply.url,
        shutdown: () => stopThread(worker),
        eventLoopUtilization: (since) => worker.performance.eventLoopUtilization(since),
      });
    });
  });
}

function stopThread(worker: Worker): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      void worker.terminate().then(() => resolve());
    };
    worker.once("exit", () => resolve());
    worker.once("message", (reply: ServiceThreadReply) => {
      if (reply.kind === "stopped") done();
    });
    worker.postMessage({ kind: "shutdown" });
  });
}
