// The namespaces whose members run or build elaboration-time code, or reach files,
// processes and the network: `Lean.*` (Elab, Meta, Environment, Kernel, ...), IO and
// its kin. A text may not name them, open them or enter them (elaboration-code.ts),
// and a header may not open them (header-screen.ts): an `open IO` there would make
// `Process.output` a short name in everything after it.
export const METAPROGRAMMING_NAMESPACES: ReadonlySet<string> = new Set([
  "Lean",
  "IO",
  "EIO",
  "BaseIO",
  "EStateM",
  "System",
  "Elab",
  "Meta",
  "Kernel",
  "Environment",
  "Parser",
  "Syntax",
  "Macro",
  "MacroM",
  "CoreM",
  "MetaM",
  "TermElabM",
  "TacticM",
  "CommandElabM",
  "Unsafe",
]);
