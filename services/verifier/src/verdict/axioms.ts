// Reading the answer to `#print axioms NAME` (Lean's Elab/Print.lean):
//   'NAME' depends on axioms: [Classical.choice, propext, Quot.sound]
//   'NAME' does not depend on any axioms
// or an error when NAME is not a constant of the environment (the theorem was never
// elaborated, e.g. after `#exit`).
import type { ReplResponse } from "../repl/protocol.js";

/** The axioms a proof may use (the Lean reference manual's "Validating a Lean Proof"). */
export const STANDARD_AXIOMS: ReadonlySet<string> = new Set(["propext", "Classical.choice", "Quot.sound"]);

export type AxiomsReport = { found: true; constant: string; axioms: string[] } | { found: false; detail: string };

// Lean quoted the name with '…'; newer messages elsewhere moved to `…`, so both are read.
const DEPENDS = /^['`]([\s\S]+?)['`] depends on axioms: \[([\s\S]*)\]\s*$/u;
const DEPENDS_ON_NONE = /^['`]([\s\S]+?)['`] does not depend on any axioms\s*$/u;

export function readAxiomsReport(response: ReplResponse): AxiomsReport {
  if (response.kind === "error") return { found: false, detail: response.response.message };
  if (response.kind !== "command") return { found: false, detail: "the REPL answered #print axioms with a proof state" };
  const messages = response.response.messages ?? [];
  const error = messages.find((message) => message.severity === "error");
  if (error) return { found: false, detail: error.data };
  for (const message of messages) {
    const depends = DEPENDS.exec(message.data);
    if (depends) {
      const axioms = depends[2]!
        .split(",")
        .map((axiom) => axiom.trim())
        .filter((axiom) => axiom !== "");
      return { found: true, constant: depends[1]!, axioms };
    }
    const none = DEPENDS_ON_NONE.exec(message.data);
    if (none) return { found: true, constant: none[1]!, axioms: [] };
  }
  return { found: false, detail: "no axioms report in the answer to #print axioms" };
}

/**
 * Whether the constant `#print axioms` reported is the declared theorem. Lean prints
 * the resolved full name: `Foo.bar` for `bar` declared inside the context's
 * `namespace Foo`. (A proof body cannot open a namespace: `namespace` is banned there.)
 */
export function isDeclaredConstant(reported: string, declared: string): boolean {
  const plain = (name: string) => name.replace(/[«»]/gu, "");
  const full = plain(reported);
  const name = plain(declared);
  return full === name || full.endsWith(`.${name}`);
}
