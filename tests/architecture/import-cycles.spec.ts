// The house has no loops: within every workspace, no module reaches itself through relative
// imports (type-only imports included: a type two files pass both ways has no owner); and
// the benchmarks use the packages as their users do, through the entry points each
// package.json exports, never a service's or package's internal path.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");

function tsFiles(dir: string, withSpecs: boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "dist" ? [] : tsFiles(full, withSpecs);
    return /\.tsx?$/u.test(entry.name) && (withSpecs || !/\.spec\.tsx?$/u.test(entry.name)) ? [full] : [];
  });
}

function importsOf(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles.map((f) => f.fileName);
}

/** A relative import's file: `./x.js` is the TypeScript source `./x.ts` (or `.tsx`). */
function resolveRelative(from: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(from), spec);
  const candidates = [base.replace(/\.js$/u, ".ts"), base.replace(/\.js$/u, ".tsx"), base, `${base}.ts`, path.join(base, "index.ts")];
  return candidates.find((file) => existsSync(file) && statSync(file).isFile());
}

/** Strongly connected components of more than one module (or a module importing itself), by Tarjan. */
export function importLoops(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) loops.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return loops;
}

function workspaceDirs(): string[] {
  return [
    "gen/ts",
    ...["packages", "services", "apps"].flatMap((group) => readdirSync(path.join(root, group)).map((d) => `${group}/${d}`)),
  ].filter((dir) => existsSync(path.join(root, dir, "package.json")) && existsSync(path.join(root, dir, "src")));
}

describe("import loops", () => {
  it("finds a loop where there is one (so the checks below can fail)", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    expect(importLoops(graph)).toEqual([["a", "b", "c"]]);
    expect(importLoops(new Map([["a", ["b"]]]))).toEqual([]);
  });

  for (const dir of workspaceDirs()) {
    it(`${dir}/src has no import loop`, () => {
      const graph = new Map<string, string[]>();
      for (const file of tsFiles(path.join(root, dir, "src"), false)) {
        const targets = importsOf(file)
          .filter((spec) => spec.startsWith("."))
          .flatMap((spec) => resolveRelative(file, spec) ?? []);
        graph.set(file, targets);
      }
      const loops = importLoops(graph).map((loop) => loop.map((file) => path.relative(root, file)).join(" <-> "));
      expect(loops).toEqual([]);
    });
  }
});

describe("the benchmarks", () => {
  /** The subpaths each workspace exports ("." is the package's own name). */
  const exported = new Map(
    workspaceDirs().map((dir) => {
      const manifest = JSON.parse(readFileSync(path.join(root, dir, "package.json"), "utf8")) as {
        name: string;
        exports?: Record<string, unknown>;
      };
      return [manifest.name, new Set(Object.keys(manifest.exports ?? { ".": "" }))] as const;
    }),
  );

  it("import services and packages only through their entry points", () => {
    const problems: string[] = [];
    for (const file of tsFiles(path.join(root, "bench"), true)) {
      const where = path.relative(root, file);
      for (const spec of importsOf(file)) {
        if (spec.startsWith(".")) {
          const target = path.relative(root, path.resolve(path.dirname(file), spec));
          // tests/ holds the stand-ins and helpers benches share with the tests; bench/ its own.
          if (!target.startsWith("bench/") && !target.startsWith("tests/")) problems.push(`${where}: ${spec} reaches into ${target}`);
          continue;
        }
        const match = /^(@lean-grpo\/[^/]+)(\/.*)?$/u.exec(spec);
        if (!match) continue;
        const subpaths = exported.get(match[1]!);
        const subpath = `.${match[2] ?? ""}`;
        const allowed = subpaths?.has(subpath) || [...(subpaths ?? [])].some((p) => p.endsWith("/*") && subpath.startsWith(p.slice(0, -1)));
        if (!allowed) problems.push(`${where}: ${spec} is not an entry point of ${match[1]}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
