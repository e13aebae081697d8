// What the stand-in remembers between requests, as the REPL does: every command
// makes a new environment (even a failed one), every sorry and tactic a new proof
// state, and unknown ids answer "Unknown environment." / "Unknown proof state."
// (transcripts unknown_environment, unknown_proof_state). Theorems a rule declares
// are recorded per environment so that `#print axioms NAME` answers like Lean.

type Json = Record<string, unknown>;

interface Environment {
  parent: number | undefined;
  /** Full constant name («» removed) → its axioms, for the constants this command declared. */
  declared: Map<string, string[]>;
  /** The namespaces open at the end of this command (`namespace A.B` → ["A", "B"]; a section is []). */
  scopes: string[][];
  /** Namespaces `open`ed (without `in`) up to the end of this command. */
  opens: string[];
}

/** What a rule says a command declares: `name` as written in the command (default: its first declaration). */
export interface Declaration {
  name?: string;
  axioms: string[];
}

const PRINT_AXIOMS = /^#print\s+axioms\s+(\S+)\s*$/u;
const NAME = String.raw`((?:«[^»]*»|[^\s:(){}[\]«»,])+)`;
/** The commands that change scope or declare a name, in order; Lean reads them the same way at any column. */
const SCOPE_OR_DECLARATION = new RegExp(
  String.raw`(?<![\p{L}\p{N}_'.«])(namespace|section|end|open|theorem|lemma|def|abbrev|alias|axiom|opaque)(?![\p{L}\p{N}_'.])[ \t]*${NAME}?`,
  "gu",
);
const plain = (name: string) => name.replace(/[«»]/gu, "");

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

  /**
   * A command's answer: `reply` with a fresh env id and fresh proof-state ids. The
   * command's `namespace`/`section`/`end`/`open` persist into later commands on its
   * env, as in Lean; when `declares` is given, the declarations in `cmd` are recorded
   * under their full names (the namespaces open where they stand) with its axioms.
   */
  commandResponse(reply: Json, parentEnv: number | undefined, cmd = "", declares?: readonly Declaration[]): Json {
    const response = structuredClone(reply);
    this.renumberSorries(response);
    if (Array.isArray(response.tactics)) for (const tactic of response.tactics as Json[]) tactic.proofState = this.newProofState();
    const env = this.nextEnv++;
    this.environments.set(env, this.elaborate(cmd, parentEnv, declares));
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

  /**
   * `#print axioms NAME` on `env`, when it is one; undefined for any other command.
   * Lean prints one report per constant NAME resolves to (Lean's resolveGlobalName):
   * `_root_.X` is exactly X; otherwise X inside the open namespaces, innermost first,
   * wins; else O.X for every `open O` (the last one first), then X itself.
   */
  printAxioms(cmd: string, env: number | undefined): Json | undefined {
    const name = PRINT_AXIOMS.exec(cmd)?.[1];
    if (name === undefined) return undefined;
    const resolved = this.resolve(plain(name), env);
    // Shapes of Lean's info and error messages at `#print` (as in the transcript options.expected.out).
    const messages =
      resolved.length === 0
        ? [
            {
              severity: "error",
              pos: { line: 1, column: 14 },
              endPos: { line: 1, column: 14 + name.length },
              data: `Unknown constant \`${name}\``,
            },
          ]
        : resolved.map(([constant, axioms]) => ({
            severity: "info",
            pos: { line: 1, column: 0 },
            endPos: { line: 1, column: 6 },
            data:
              axioms.length === 0
                ? `'${constant}' does not depend on any axioms`
                : `'${constant}' depends on axioms: [${axioms.join(", ")}]`,
          }));
    return this.commandResponse({ messages }, env, cmd);
  }

  /** The scopes, opens and declarations after `cmd` on top of `parentEnv`. */
  private elaborate(cmd: string, parentEnv: number | undefined, declares: readonly Declaration[] | undefined): Environment {
    const parent = parentEnv === undefined ? undefined : this.environments.get(parentEnv);
    const scopes = (parent?.scopes ?? []).map((scope) => [...scope]);
    const opens = [...(parent?.opens ?? [])];
    const declared = new Map<string, string[]>();
    const unnamed = declares?.find((entry) => entry.name === undefined);
    let first = true;
    for (const match of cmd.matchAll(SCOPE_OR_DECLARATION)) {
      const [, command, name] = match;
      const after = cmd.slice(match.index + match[0].length);
      if (command === "namespace" && name) scopes.push(plain(name).split("."));
      else if (command === "section") scopes.push([]);
      else if (command === "end") scopes.pop();
      else if (command === "open" && name && !/^\s*in(?![\p{L}\p{N}_'])/u.test(after)) opens.push(plain(name));
      else if (declares && name && command !== "open" && command !== "namespace" && command !== "end" && command !== "section") {
        const entry = declares.find((d) => d.name !== undefined && plain(d.name) === plain(name)) ?? (first ? unnamed : undefined);
        first = false;
        const full = plain(name).startsWith("_root_.") ? plain(name).slice("_root_.".length) : [...scopes.flat(), plain(name)].join(".");
        declared.set(full, entry?.axioms ?? []);
      }
    }
    // A named entry the command text does not show is declared at the root, as written.
    for (const entry of declares ?? []) {
      if (
        entry.name !== undefined &&
        ![...declared.keys()].some((full) => full === plain(entry.name!) || full.endsWith(`.${plain(entry.name!)}`))
      ) {
        declared.set(plain(entry.name), entry.axioms);
      }
    }
    return { parent: parentEnv, declared, scopes, opens };
  }

  private resolve(name: string, env: number | undefined): [string, string[]][] {
    const all = new Map<string, string[]>();
    const chain: Environment[] = [];
    for (let at = env; at !== undefined; at = this.environments.get(at)?.parent) chain.push(this.environments.get(at)!);
    for (const environment of chain.reverse()) for (const [constant, axioms] of environment.declared) all.set(constant, axioms);
    const here = env === undefined ? undefined : this.environments.get(env);
    const found = (constant: string): [string, string[]][] => (all.has(constant) ? [[constant, all.get(constant)!]] : []);
    if (name.startsWith("_root_.")) return found(name.slice("_root_.".length));
    const namespace = (here?.scopes ?? []).flat();
    const inNamespaces = namespace.flatMap((_, i) => found([...namespace.slice(0, namespace.length - i), name].join(".")));
    if (inNamespaces.length > 0) return inNamespaces;
    // Lean prepends each open namespace's match in turn (resolveOpenDecls), so the last `open` reports first.
    const viaOpens = (here?.opens ?? []).flatMap((open) => found(`${open}.${name}`)).reverse();
    return [...viaOpens, ...found(name)];
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
