// What the stand-in remembers between requests, as the REPL does: every command
// makes a new environment (even a failed one), every sorry and tactic a new proof
// state, and unknown ids answer "Unknown environment." / "Unknown proof state."
// (transcripts unknown_environment, unknown_proof_state). Theorems a rule declares
// are recorded per environment so that `#print axioms NAME` answers like Lean.

type Json = Record<string, unknown>;

interface Environment {
  parent: number | undefined;
  /** Theorem name → its axioms. */
  declared: Map<string, string[]>;
}

const PRINT_AXIOMS = /^#print\s+axioms\s+(\S+)\s*$/u;
const DECLARED_NAME = /(?:theorem|lemma)\s+((?:«[^»]*»|[^\s:(){}[\]«»])+)/u;

export class ReplState {
  private readonly environments = new Map<number, Environment>();
  private readonly proofStates = new Set<number>();
  private nextEnv = 0;
  private nextProofState = 0;

  knowsEnv(env: number): boolean {
    return this.environments.has(env);
  }

  knowsProofState(proofState: number): boolean {
    return this.proofStates.has(proofState);
  }

  /** A command's answer: `reply` with a fresh env id and fresh proof-state ids. */
  commandResponse(reply: Json, parentEnv: number | undefined, declares?: { name: string; axioms: string[] }): Json {
    const response = structuredClone(reply);
    this.renumberSorries(response);
    if (Array.isArray(response.tactics)) for (const tactic of response.tactics as Json[]) tactic.proofState = this.newProofState();
    const env = this.nextEnv++;
    this.environments.set(env, { parent: parentEnv, declared: new Map(declares ? [[declares.name, declares.axioms]] : []) });
    // The REPL prints `env` last; keep that order.
    delete response.env;
    response.env = env;
    return response;
  }

  /** A tactic's answer: `reply` with a fresh proof-state id (and fresh ids for its sorries). */
  proofStepResponse(reply: Json): Json {
    const response = structuredClone(reply);
    this.renumberSorries(response);
    response.proofState = this.newProofState();
    return response;
  }

  /** `#print axioms NAME` on `env`, when it is one; undefined for any other command. */
  printAxioms(cmd: string, env: number | undefined): Json | undefined {
    const name = PRINT_AXIOMS.exec(cmd)?.[1];
    if (name === undefined) return undefined;
    const axioms = this.axiomsOf(name, env);
    // Shapes of Lean's info and error messages at `#print` (as in the transcript options.expected.out).
    const message =
      axioms === undefined
        ? {
            severity: "error",
            pos: { line: 1, column: 14 },
            endPos: { line: 1, column: 14 + name.length },
            data: `Unknown constant \`${name}\``,
          }
        : {
            severity: "info",
            pos: { line: 1, column: 0 },
            endPos: { line: 1, column: 6 },
            data: axioms.length === 0 ? `'${name}' does not depend on any axioms` : `'${name}' depends on axioms: [${axioms.join(", ")}]`,
          };
    return this.commandResponse({ messages: [message] }, env);
  }

  /** The name after `theorem`/`lemma` in a command. */
  static declaredName(cmd: string): string | undefined {
    return DECLARED_NAME.exec(cmd)?.[1];
  }

  private axiomsOf(name: string, env: number | undefined): string[] | undefined {
    for (let at = env; at !== undefined; at = this.environments.get(at)?.parent) {
      const axioms = this.environments.get(at)?.declared.get(name);
      if (axioms) return axioms;
    }
    return undefined;
  }

  private renumberSorries(response: Json): void {
    if (Array.isArray(response.sorries)) for (const sorry of response.sorries as Json[]) sorry.proofState = this.newProofState();
  }

  private newProofState(): number {
    const id = this.nextProofState++;
    this.proofStates.add(id);
    return id;
  }
}
