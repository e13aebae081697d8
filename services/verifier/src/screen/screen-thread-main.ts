// A screen thread: runs the proof screen (verdict/proof-source.ts) for the verifier's
// main thread, so that a long text screened here holds no event loop that answers RPCs.
import { parentPort } from "node:worker_threads";
import { BUILTIN_TABLE, makeTokenTable, PRESUMED_TABLE, tablesAfterContext, type TokenTable } from "@lean-grpo/lean";
import { prepareProof, prepareProofStart, prepareTactic } from "../verdict/proof-source.js";
import type { ScreenJob, ScreenReply, ScreenRequest, TableRef } from "./screen-protocol.js";

const port = parentPort ?? raise("screen-thread-main.ts runs only as a worker thread (screen-threads.ts starts it)");
const tables = new Map<number, TokenTable>();

function tableOf(ref: TableRef): TokenTable {
  if (ref.kind === "builtin") return BUILTIN_TABLE;
  if (ref.kind === "presumed") return PRESUMED_TABLE;
  if (ref.spec) tables.set(ref.id, makeTokenTable(ref.spec.tokens, ref.spec.commandTokens, ref.spec.source));
  return tables.get(ref.id) ?? raise(`token table ${ref.id} was never sent to this thread`);
}

function run(job: ScreenJob): unknown {
  switch (job.op) {
    case "proof":
      return prepareProof(job.target, job.proof, tableOf(job.table));
    case "start":
      return prepareProofStart(job.target, tableOf(job.table));
    case "tactic":
      return prepareTactic(job.tactic, job.theoremName, tablesAfterContext(job.context, tableOf(job.table)));
  }
}

port.on("message", ({ id, job }: ScreenRequest) => {
  let reply: ScreenReply;
  try {
    reply = { id, ok: true, value: run(job) };
  } catch (error) {
    reply = { id, ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});

function raise(message: string): never {
  throw new Error(message);
}
