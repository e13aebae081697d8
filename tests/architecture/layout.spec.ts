// The layout's import rules (README "Layout"), checked on every file of every workspace's
// src/: imports point apps → services → kit → packages → gen and never back; no service
// imports another service; a workspace imports only what its package.json declares; a
// relative import stays inside its workspace; and the model library's light subpaths
// load no tfjs.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");

type Layer = "gen" | "package" | "kit" | "service" | "app";

interface Workspace {
  name: string;
  dir: string;
  layer: Layer;
  declared: Set<string>;
}

/** Which workspace layers each layer may import. */
const ALLOWED: Record<Layer, readonly Layer[]> = {
  gen: [],
  package: ["package", "gen"],
  kit: ["package", "gen"],
  service: ["kit", "package", "gen"],
  app: ["app", "service", "kit", "package", "gen"],
};

/**
 * Apps are composition roots; one imports another only where the CLI serves the dashboard
 * page and writes report.html with it. The dashboard itself imports no app or service.
 */
const APP_TO_APP = new Set(["@lean-grpo/cli -> @lean-grpo/dashboard"]);

function layerOf(dir: string): Layer {
  if (dir === "gen/ts") return "gen";
  if (dir === "packages/kit") return "kit";
  if (dir.startsWith("packages/")) return "package";
  if (dir.startsWith("services/")) return "service";
  if (dir.startsWith("apps/")) return "app";
  throw new Error(`no layer for workspace ${dir}`);
}

function workspaces(): Workspace[] {
  const dirs = [
    "gen/ts",
    ...["packages", "services", "apps"].flatMap((group) => readdirSync(path.join(root, group)).map((d) => `${group}/${d}`)),
  ];
  return dirs
    .filter((dir) => statSync(path.join(root, dir)).isDirectory())
    .flatMap((dir) => {
      let manifest: { name: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
      try {
        manifest = JSON.parse(readFileSync(path.join(root, dir, "package.json"), "utf8"));
      } catch {
        return []; // not a Node workspace (e.g. services/learner-torch)
      }
      return [{ name: manifest.name, dir, layer: layerOf(dir), declared: new Set(Object.keys(manifest.dependencies ?? {})) }];
    });
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".spec.ts")) out.push(full);
    }
  };
  walk(path.join(root, dir));
  return out;
}

function importsOf(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles.map((f) => f.fileName);
}

const all = workspaces();
const byName = new Map(all.map((w) => [w.name, w]));

describe("layout", () => {
  it("finds the workspaces of every layer", () => {
    const layers = new Set(all.map((w) => w.layer));
    expect([...layers].sort()).toEqual(["app", "gen", "kit", "package", "service"]);
    expect(byName.get("@lean-grpo/lm")?.layer).toBe("package");
    expect(byName.get("@lean-grpo/cli")?.dir).toBe("apps/lean-grpo");
  });

  for (const workspace of all.filter((w) => w.layer !== "gen")) {
    it(`${workspace.dir}/src imports only what its layer and package.json allow`, () => {
      const problems: string[] = [];
      for (const file of sourceFiles(`${workspace.dir}/src`)) {
        const where = path.relative(root, file);
        for (const spec of importsOf(file)) {
          if (spec.startsWith(".")) {
            const target = path.relative(path.join(root, workspace.dir), path.resolve(path.dirname(file), spec));
            if (target.startsWith("..")) problems.push(`${where}: relative import ${spec} leaves ${workspace.dir}`);
            continue;
          }
          const match = /^(@lean-grpo\/[^/]+)/.exec(spec);
          if (!match) continue;
          const target = byName.get(match[1]!);
          if (!target) {
            problems.push(`${where}: ${spec} is no workspace`);
            continue;
          }
          if (target === workspace) problems.push(`${where}: imports its own package by name (${spec}); use a relative import`);
          else if (!ALLOWED[workspace.layer].includes(target.layer))
            problems.push(`${where}: a ${workspace.layer} may not import ${target.layer} ${target.name}`);
          else if (target.layer === "app" && !APP_TO_APP.has(`${workspace.name} -> ${target.name}`))
            problems.push(`${where}: an app imports another app only as ${[...APP_TO_APP].join(", ")}`);
          if (!workspace.declared.has(target.name))
            problems.push(`${where}: imports ${target.name}, which ${workspace.dir}/package.json does not declare`);
        }
      }
      expect(problems).toEqual([]);
    });
  }

  it("the dashboard (apps/dashboard) depends on no service, only the contract and the kit; its page's script on the contract alone", () => {
    const manifest = JSON.parse(readFileSync(path.join(root, "apps/dashboard/package.json"), "utf8"));
    const ours = Object.keys({ ...manifest.dependencies }).filter((name) => name.startsWith("@lean-grpo/"));
    expect(ours).toEqual(["@lean-grpo/gen", "@lean-grpo/kit"]);
    // The kit (Node's servers, paths, auth) serves the page; the browser bundle must not pull it in.
    const browser = sourceFiles("apps/dashboard/src/browser").flatMap((file) =>
      importsOf(file).map((spec) => `${path.basename(file)}: ${spec}`),
    );
    expect(browser.filter((i) => /: @lean-grpo\/(?!gen\/)/.test(i))).toEqual([]);
  });

  it("the inference service and the orchestrator do not depend on the learner", () => {
    for (const dir of ["services/inference", "services/orchestrator"]) {
      const manifest = JSON.parse(readFileSync(path.join(root, dir, "package.json"), "utf8"));
      expect(Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })).not.toContain("@lean-grpo/learner");
    }
  });
});

describe("the model library's light subpaths", () => {
  const lm = byName.get("@lean-grpo/lm")!;
  const manifest = JSON.parse(readFileSync(path.join(root, lm.dir, "package.json"), "utf8")) as { exports: Record<string, string> };

  /** Every module a file reaches through relative imports, with the bare imports they make. */
  function bareImportsReachable(entry: string): Set<string> {
    const seen = new Set<string>();
    const bare = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const spec of importsOf(file)) {
        if (spec.startsWith(".")) visit(path.resolve(path.dirname(file), spec).replace(/\.js$/, ".ts"));
        else bare.add(spec);
      }
    };
    visit(path.join(root, lm.dir, entry));
    return bare;
  }

  for (const subpath of ["./tokenizer", "./safetensors"]) {
    it(`${subpath} loads no tfjs`, () => {
      const entry = manifest.exports[subpath];
      expect(entry).toBeDefined();
      const tensorflow = [...bareImportsReachable(entry!)].filter((spec) => spec.startsWith("@tensorflow/"));
      expect(tensorflow).toEqual([]);
    });
  }

  it("the full entry does load tfjs (so the check above can fail)", () => {
    expect([...bareImportsReachable(manifest.exports["."]!)].some((spec) => spec.startsWith("@tensorflow/"))).toBe(true);
  });
});
