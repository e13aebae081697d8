// The slow path of answer comparison: answers the exact parser cannot read
// (\sqrt, \pi, expressions in x) are parsed with @cortex-js/compute-engine and
// compared by value, at sample points when they contain variables. Only a
// whitelist of cheap operations is evaluated, so that an answer like 100000!
// or a sum to 10^9 cannot stall the service.
import { ComputeEngine } from "@cortex-js/compute-engine";

/** The engine's expression type (its package does not re-export it under NodeNext resolution). */
type BoxedExpression = ReturnType<ComputeEngine["parse"]>;

export interface ComplexValue {
  re: number;
  im: number;
}

export interface SymbolicValue {
  /** Free variables, sorted. */
  variables: string[];
  /** Its value with each variable set from `point` (ignored when there are none). */
  valueAt(point: readonly number[]): ComplexValue;
}

const EVALUATED = new Set([
  "Add",
  "Subtract",
  "Negate",
  "Multiply",
  "Divide",
  "Rational",
  "Power",
  "Sqrt",
  "Root",
  "Square",
  "Exp",
  "Ln",
  "Log",
  "Lb",
  "Lg",
  "Sin",
  "Cos",
  "Tan",
  "Cot",
  "Sec",
  "Csc",
  "Arcsin",
  "Arccos",
  "Arctan",
  "Arccot",
  "Sinh",
  "Cosh",
  "Tanh",
  "Abs",
  "Half",
  "Complex",
  "Floor",
  "Ceil",
  "Max",
  "Min",
  "Factorial",
]);
const LARGEST_FACTORIAL = 170;
const MAX_NODES = 200;

let engine: ComputeEngine | undefined;
function computeEngine(): ComputeEngine {
  engine ??= new ComputeEngine();
  return engine;
}

/** Undefined when the answer does not parse or uses something outside the whitelist. */
export function parseSymbolic(latex: string): SymbolicValue | undefined {
  const expr = computeEngine().parse(prepareLatex(latex));
  if (!expr.isValid || !isCheapToEvaluate(expr.json)) return undefined;
  const variables = [...expr.unknowns].sort();
  return {
    variables,
    valueAt(point) {
      const bound = variables.length === 0 ? expr : expr.subs(Object.fromEntries(variables.map((name, i) => [name, point[i] ?? 0])));
      return complexOf(bound.N());
    },
  };
}

/** Rewrites what the engine does not read: subscripted names, \binom of integers. */
function prepareLatex(latex: string): string {
  return latex
    .replace(/([a-zA-Z])_\{?([a-zA-Z0-9]+)\}?/g, "\\operatorname{$1$2}")
    .replace(/\\binom\{?(\d{1,3})\}?\{?(\d{1,3})\}?/g, (_, n: string, k: string) => binomial(Number(n), Number(k)).toString());
}

function binomial(n: number, k: number): bigint {
  if (k > n) return 0n;
  let result = 1n;
  for (let i = 1; i <= Math.min(k, n - k); i++) result = (result * BigInt(n - i + 1)) / BigInt(i);
  return result;
}

function complexOf(value: BoxedExpression): ComplexValue {
  return { re: value.re, im: value.im };
}

function isCheapToEvaluate(json: unknown): boolean {
  let nodes = 0;
  const visit = (node: unknown): boolean => {
    if (++nodes > MAX_NODES) return false;
    if (typeof node === "number") return true;
    // Quoted strings ('text') are not math; bare strings are symbols.
    if (typeof node === "string") return !node.startsWith("'");
    if (Array.isArray(node)) {
      const [head, ...args] = node as unknown[];
      if (typeof head !== "string" || !EVALUATED.has(head)) return false;
      if (head === "Factorial") {
        const [n] = args;
        return typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= LARGEST_FACTORIAL;
      }
      return args.every(visit);
    }
    if (node !== null && typeof node === "object") {
      // {num: "1.5e300"} is a number literal; {sym}, {str}, {fn} are the long forms of the above.
      const record = node as Record<string, unknown>;
      if (typeof record.num === "string") return true;
      if (typeof record.sym === "string") return visit(record.sym);
      if (Array.isArray(record.fn)) return visit(record.fn);
      return false;
    }
    return false;
  };
  return visit(json);
}
