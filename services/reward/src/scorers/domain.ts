// domain: a bonus, paid only when proved, for a proof that works with its
// domain's tools (algebra: ring, linarith...; number theory: omega, Nat.Prime...).
// The proof is read as code: comments and strings are blanked, and tools under
// try / repeat / first / <|> do not count, since the proof checks without them.
import { TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { DOMAINS, DOMAIN_TOOLS, domainOf, domainToolUsed } from "../lean/domain-tools.js";
import { reliedOnIdentifiers } from "../lean/tactic-uses.js";
import { numberParam, type Param } from "../reward/params.js";
import { defineScorer, leanEvidence } from "../reward/scorer.js";

const bonus = (domain: string): Param<number> =>
  numberParam({
    default: 1,
    min: 0,
    max: 10,
    description: `Value for a proved ${domain.replace("_", " ")} theorem whose proof uses one of: ${DOMAIN_TOOLS[domain as keyof typeof DOMAIN_TOOLS].slice(0, 6).join(", ")}, ...`,
  });

export const domainScorer = defineScorer({
  name: "domain",
  description:
    `Lean tasks, proved only (0 otherwise). The bonus of the theorem's domain tag (${DOMAINS.join(", ")}; aliases like ` +
    '"nt", "number theory") when the parsed proof uses at least one of that domain\'s tactics or Mathlib names outside ' +
    "comments, strings and failure-hiding combinators (try, repeat, first, any_goals, <|>). Once is enough: " +
    "repeating tools earns nothing more. Other tags earn 0.",
  tasks: [TaskKind.LEAN_PROOF],
  groupLevel: false,
  params: {
    algebra: bonus("algebra"),
    number_theory: bonus("number_theory"),
    analysis: bonus("analysis"),
    geometry: bonus("geometry"),
    combinatorics: bonus("combinatorics"),
  },
  bounds: (p) => ({ solved: [0, Math.max(...DOMAINS.map((d) => p[d]))], unsolved: [0, 0] }),
  score(evidence, p) {
    if (!evidence.solved) return { value: 0, detail: "not proved" };
    const domain = domainOf(evidence.theorem.domain);
    if (!domain)
      return { value: 0, detail: evidence.theorem.domain ? `no tools listed for domain "${evidence.theorem.domain}"` : "no domain tag" };
    const proof = leanEvidence(evidence).proof;
    const tool = proof ? domainToolUsed(domain, reliedOnIdentifiers(proof.code)) : undefined;
    return tool
      ? { value: p[domain], detail: `${domain} proof uses ${tool}` }
      : { value: 0, detail: `${domain} proof uses none of its domain's tools` };
  },
});
