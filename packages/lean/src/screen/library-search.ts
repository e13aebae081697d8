// Library search, refused by every name Mathlib gives it. These tactics search the
// whole environment for a lemma that closes (or rewrites) the goal: slow, and the
// proofs they have produced can hide a sorry (DeepSeek-Prover-V2, App. B), so a proof
// must name the lemma itself. Every `?` tactic prints a suggestion; only these search
// the library for it:
//   exact?, apply?, rw? (and the rw?? widget), exact?% (the term form), observe and
//   observe? (`observe h : t` runs exact?), hint (runs its registered tactics, exact?
//   among them), rw_search, library_search (the old name of exact?), suggest (the
//   Lean 3 name of apply?), and any `!` or `?` variant of them.
// `says` runs the tactic before it (`exact? says exact foo`), so it is refused by that
// tactic's name. The other `?` forms run one named tactic and print the call that
// reproduces it, searching nothing beyond that tactic's own lemmas: simp?, simp_all?,
// dsimp?, simp?!, aesop? (its rule sets), norm_num? is not a Mathlib tactic, show_term,
// unfold?, conv?; they stay allowed.
import { keywordOf } from "../commands.js";
import { construct, EVERYWHERE, type BannedConstruct } from "./construct.js";

const SEARCH =
  "searches the library for a lemma (library search), which has produced proofs that hide a sorry (DeepSeek-Prover-V2, App. B)";

/** Search tactics whose names are also ordinary words, refused as a plain one-part identifier only (`h.hint` is a name). */
const PLAIN_WORDS = ["observe", "hint", "suggest", "library_search", "rw_search"];
/** Search tactics whose `?` no honest name holds, refused as any component of a name. */
const QUESTION_FORMS = ["exact?", "apply?", "rw?", "observe?"];

/** A name, with any `!`/`?` suffixes Mathlib's variants add (`rw??`, `library_search!`), as `base`. */
function withoutSuffixes(name: string): string {
  return name.replace(/[!?]+$/u, "");
}

const SEARCH_BASES = new Set([...PLAIN_WORDS, ...QUESTION_FORMS.map(withoutSuffixes)]);

/** Whether `component` is a search tactic's name: one of the `?` forms with suffixes, or a plain word with any. */
function isSearchName(component: string, plain: boolean): boolean {
  const base = withoutSuffixes(component);
  if (!SEARCH_BASES.has(base)) return false;
  const suffix = component.slice(base.length);
  return suffix.includes("?") || (plain && PLAIN_WORDS.includes(base));
}

export const LIBRARY_SEARCH: readonly BannedConstruct[] = [
  construct("library search", SEARCH, EVERYWHERE, (tokens, at) => {
    const token = tokens[at]!;
    if (token.kind !== "identifier") return undefined;
    const plain = keywordOf(token) !== undefined;
    return token.components!.some((component, i) => isSearchName(component, plain && i === 0)) ? at + 1 : undefined;
  }),
];

/** Every name the entry refuses, for the docs and the tests. */
export const LIBRARY_SEARCH_NAMES: readonly string[] = [...QUESTION_FORMS, "rw??", "exact?%", ...PLAIN_WORDS, "library_search!"];
