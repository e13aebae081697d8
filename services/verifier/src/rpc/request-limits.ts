// Limits every request is held to before it reaches a worker.
import { Code, ConnectError } from "@connectrpc/connect";
import type { ReplConfig } from "../config.js";
import { InvalidField } from "../verdict/theorem-target.js";

/** The Lean time limit of a request: its own, or the server default; never above repl.max_timeout_ms. */
export function leanTimeoutMs(field: string, requested: number, config: ReplConfig): number {
  if (requested > config.max_timeout_ms) {
    throw new InvalidField(
      field,
      `${requested} ms is above the limit of ${config.max_timeout_ms} ms (repl.max_timeout_ms); use 0 for the default of ${config.timeout_ms} ms`,
    );
  }
  return requested === 0 ? config.timeout_ms : requested;
}

/** A proof or tactic text: present and within repl.max_proof_bytes. */
export function checkText(field: string, text: string, config: ReplConfig): void {
  if (text.trim() === "") throw new InvalidField(field, "is empty");
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > config.max_proof_bytes) {
    throw new ConnectError(
      `${field}: ${bytes} bytes is above the limit of ${config.max_proof_bytes} bytes (repl.max_proof_bytes)`,
      Code.ResourceExhausted,
    );
  }
}
