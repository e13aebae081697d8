// Reading the answer to `#print axioms NAME` (Lean's Elab/Print.lean). Lean prints one
// report for every constant NAME resolves to:
//   'NAME' depends on axioms: [Classical.choice, propext, Quot.sound]
//   'NAME' does not depend on any axioms
// or an error when NAME is not a constant of the environment (the theorem was never
// elaborated, e.g. after `#exit`). The service asks by `_root_.FULLNAME`, which
// resolves to that one constant or to none, whatever `open`, `namespace` or other
// declarations came before; and it reads every report, so a second one, or one about
// another constant, cannot pass for the theorem's.
import type { ReplResponse } from "../repl/protocol.js";

/** The axioms a proof may use (the Lean reference manual's "Validating a Lean Proof"). */
export const STANDARD_AXIOMS: ReadonlySet<string> = new Set(["propext", "Classical.choice", "Quot.sound"]);

export interface AxiomsReport {
  constant: string;
  axioms: string[];
}

export type AxiomsAnswer = { found: true; reports: AxiomsReport[] } | { found: false; detail: string };

// Lean quoted the name with '…'; newer messages elsewhere moved to `…`, so both are read.
const DEPENDS = /^['`]([\s\S]+?)['`] depends on axioms: \[([\s\S]*)\]\s*$/u;
const DEPENDS_ON_NONE = /^['`]([\s\S]+?)['`] does not depend on any axioms\s*$/u;

/** The command that asks about the theorem declared as `fullName`, by a name no declaration or `open` can redirect. */
export function printAxiomsCommand(fullName: string): string {
  return `#print axioms _root_.${fullName}`;
}

export function readAxiomsReports(response: ReplResponse): AxiomsAnswer {
  if (response.kind === "error") return { found: false, detail: response.response.message };
  if (response.kind !== "command") return { found: false, detail: "the REPL answered #print axioms with a proof state" };
  const messages = response.response.messages ?? [];
  const error = messages.find((message) => message.severity === "error");
  if (error) return { found: false, detail: error.data };
  const reports: AxiomsReport[] = [];
  for (const message of messages) {
    const depends = DEPENDS.exec(message.data);
    if (depends) {
      const axioms = depends[2]!
        .split(",")
        .map((axiom) => axiom.trim())
        .filter((axiom) => axiom !== "");
      reports.push({ constant: depends[1]!, axioms });
      continue;
    }
    const none = DEPENDS_ON_NONE.exec(message.data);
    if (none) reports.push({ constant: none[1]!, axioms: [] });
  }
  if (reports.length === 0) return { found: false, detail: "no axioms report in the answer to #print axioms" };
  return { found: true, reports };
}

/**
 * Whether the constant a report names is exactly the declared theorem `fullName`
 * (as `qualifiedName` gives it), «quotes» aside; a `private theorem` is reported
 * under its private name `_private.<module>.0.<fullName>`.
 */
export function isDeclaredConstant(reported: string, fullName: string): boolean {
  const plain = (name: string) => name.replace(/[«»]/gu, "");
  const full = plain(reported);
  const name = plain(fullName);
  return full === name || (full.startsWith("_private.") && full.endsWith(`.0.${name}`));
}
