// A stand-in for leanprover/comparator, for tests: a separate process with its
// interface — `comparator CONFIG.json` run in a Lake project holding the challenge
// and solution modules; it prints its stages ("Building M", "Exporting [...] from M",
// "Running Lean default kernel on solution.", "Your solution is okay!") and exits 0
// when the solution passes, and ends with "uncaught exception: ..." on stderr and
// exit 1 when it does not. It never runs Lean: what the kernel finds comes from the
// same rules file as the REPL stand-in (--rules), the rule that matches
// the solution's text, so a test says once what Lean makes of a text and both
// processes agree. Of its own it checks what comparator checks on the modules'
// text: the config's fields, the theorem declared in both, the statements equal (the
// rule may say the solution's elaborates to another type than its text reads), the
// axioms within the permitted ones. It is never on the product's default path.
//
//   node --import tsx main.ts [--rules rules.json] [--log runs.jsonl] comparator.json
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { findRule, type Rule, type RulesFile } from "../lean-repl/rules.js";

interface Config {
  challenge_module: string;
  solution_module: string;
  theorem_names: string[];
  permitted_axioms: string[];
}

function fail(message: string): never {
  process.stderr.write(`uncaught exception: ${message}\n`);
  process.exit(1);
}

function readConfig(path: string | undefined): Config {
  if (path === undefined) fail("Expected config file path as first argument.");
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  } catch (error) {
    fail(`cannot read ${path}: ${String(error)}`);
  }
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === "string");
  if (typeof value.challenge_module !== "string" || typeof value.solution_module !== "string")
    fail("property not found: challenge_module / solution_module");
  if (!strings(value.theorem_names) || !strings(value.permitted_axioms)) fail("property not found: theorem_names / permitted_axioms");
  return value as unknown as Config;
}

/** `lake build M` in the sandbox: the module's file must exist. */
function build(module: string): string {
  console.log(`Building ${module}`);
  const file = join(process.cwd(), `${module.replaceAll(".", "/")}.lean`);
  if (!existsSync(file)) {
    process.stderr.write(`error: unknown target \`${module}\`\n`);
    fail("Child exited with 1");
  }
  return readFileSync(file, "utf8");
}

/** The module's text without its import header: what the REPL elaborated on the header's env. */
function body(text: string): string {
  const lines = text.split("\n");
  let i = 0;
  while (i < lines.length && (lines[i]!.startsWith("import ") || lines[i]!.trim() === "")) i++;
  return lines.slice(i).join("\n").replace(/\n$/u, "");
}

/** The statement of `theorem NAME` (up to its `:=`), or undefined when the module does not declare it. */
function statementOf(text: string, name: string): string | undefined {
  const last = name.slice(name.lastIndexOf(".") + 1);
  const escaped = last.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&");
  const match = new RegExp(`(?:theorem|lemma)\\s+(?:[\\w.'«»]*\\.)?${escaped}(?=[\\s:({[])([\\s\\S]*?):=`, "u").exec(text);
  return match?.[1]?.trim();
}

function axiomsOf(rule: Rule | undefined): string[] {
  const declared = rule?.declares === undefined ? [] : [rule.declares].flat();
  return (declared.find((d) => d.name === undefined) ?? declared[0])?.axioms ?? [];
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ options: { rules: { type: "string" }, log: { type: "string" } }, allowPositionals: true });
  const config = readConfig(positionals[0]);
  const rulesPath = values.rules;
  const script: RulesFile = rulesPath ? (JSON.parse(readFileSync(rulesPath, "utf8")) as RulesFile) : { rules: [] };
  const [theorem] = config.theorem_names;
  if (theorem === undefined) fail("theorem_names is empty");

  const challenge = build(config.challenge_module);
  console.log(`Exporting [${config.theorem_names.join(", ")}] from ${config.challenge_module}`);
  const challengeStatement = statementOf(challenge, theorem);
  if (challengeStatement === undefined) fail(`Const not found in challenge: '${theorem}'`);

  const solution = build(config.solution_module);
  const rule = findRule(script.rules, { kind: "command", cmd: body(solution), env: 0 });
  if (values.log) {
    appendFileSync(values.log, `${JSON.stringify({ pid: process.pid, config, challenge, solution, rule: rule?.when })}\n`);
  }
  if (rule?.replay?.hang) {
    // A pending promise alone would let node exit; a timer keeps the process running until it is killed.
    setInterval(() => {}, 60_000);
    await new Promise(() => {});
  }
  if (rule?.replay?.refuses !== undefined && rule.replay.stage === "solution-build") fail(`Child exited with 1: ${rule.replay.refuses}`);
  console.log(`Exporting [${config.theorem_names.join(", ")}] from ${config.solution_module}`);
  const written = statementOf(solution, theorem);
  if (written === undefined) fail(`Const not found in solution: '${theorem}'`);
  // Comparator compares elaborated types; a rule says where the solution's differs from its text.
  const solutionStatement = rule?.replay?.elaboratedStatement ?? written;
  if (solutionStatement !== challengeStatement) fail(`Challenge and solution theorem statement do not match: '${theorem}'`);
  const illegal = axiomsOf(rule).find((axiom) => !config.permitted_axioms.includes(axiom));
  if (illegal !== undefined) fail(`Illegal axiom detected: '${illegal}'`);

  console.log("Running Lean default kernel on solution.");
  if (rule?.replay?.refuses !== undefined) {
    console.log("Lean default kernel rejects the solution");
    fail(rule.replay.refuses);
  }
  console.log("Lean default kernel accepts the solution");
  console.log("Your solution is okay!");
}

await main();
