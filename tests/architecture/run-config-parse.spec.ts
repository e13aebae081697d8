// A run-config value is parsed once, by its owner. The orchestrator owns the run config
// (services/orchestrator/src/run/config/run-config.ts): StartRun reads the typed run_config, or the
// deprecated Struct, in one mapping function (run-config-message.ts) and parses it once with
// RunConfigSchema (parse-run-config.ts); everything downstream gets the typed RunConfig. A client
// (the CLI) carries the YAML to StartRun as the typed message and reads back the resolved
// config from the response. So RunConfigSchema used as a value (parse, safeParse, extend,
// shape) anywhere else in the product's code is a second parse that can drift from the
// owner's, and so is a second YAML ↔ message mapping (fromJson/toJson of RunConfig). This
// test finds both by reading the TypeScript syntax tree of every product source file.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { sourceFiles } from "./support/source-files.js";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");

/** Where each identifier may be used as a value, and why. */
const OWNERS: Record<string, Record<string, string>> = {
  RunConfigSchema: {
    "services/orchestrator/src/run/config/run-config.ts": "the definition",
    "services/orchestrator/src/run/config/parse-run-config.ts":
      "the one parse: a StartRun config, a resumed run's config.json, Evaluate's run config, a client's check before it starts anything",
    "services/orchestrator/src/run/config/new-run-id.ts": "exp_name's rule, for a client that names a run's log folder before StartRun",
    "apps/lean-grpo/src/config-reference/config-reference.ts": "describes every key for `lean-grpo config` and the docs (no values read)",
  },
  RunConfigMessageSchema: {
    "services/orchestrator/src/run/config/run-config-message.ts": "the one mapping between the YAML shape and the message",
    "apps/lean-grpo/src/commands/train-file.ts": "the names of the run sections a train file may hold (no values read)",
    "apps/lean-grpo/src/commands/train-command.ts": "StartRunResponse.config as JSON for the trackers (no values read)",
  },
};

/**
 * Second parses that remain, each with the change that removes it. The test fails when one
 * is gone (so the entry goes too) and when a file not listed here or above uses the schema.
 */
const PENDING: Record<string, string> = {
  // (none: `lean-grpo eval` calls the orchestrator's Evaluate RPC, which parses with parse-run-config.ts's parseRunConfig)
};

/** The product's TypeScript: every workspace's src/ under packages/, services/ and apps/. */
function productFiles(): string[] {
  return ["packages", "services", "apps"]
    .flatMap((top) => readdirSync(path.join(root, top)).map((name) => path.join(root, top, name, "src")))
    .filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    .flatMap(sourceFiles)
    .map((file) => path.relative(root, file));
}

/** Identifiers of `names` used as values: not in imports, exports' names, or type positions (typeof X in a type). */
export function valueUses(text: string, names: ReadonlySet<string>): string[] {
  const source = ts.createSourceFile("file.ts", text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isTypeQueryNode(node) || ts.isTypeReferenceNode(node)) return;
    if (ts.isExportDeclaration(node) && node.moduleSpecifier === undefined) return;
    if (ts.isIdentifier(node) && names.has(node.text) && !ts.isImportSpecifier(node.parent) && !ts.isExportSpecifier(node.parent)) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      found.push(`${node.text} (line ${line + 1})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("a run-config value is parsed once, by the orchestrator", () => {
  const names = new Set(Object.keys(OWNERS));
  const uses = new Map(productFiles().map((file) => [file, valueUses(readFileSync(path.join(root, file), "utf8"), names)]));

  it("no product file outside its owners uses the run config's schema or its message mapping", () => {
    // The scan covers the product: the CLI's train command and the orchestrator among it.
    expect([...uses.keys()]).toEqual(
      expect.arrayContaining(["apps/lean-grpo/src/commands/train-file.ts", "services/orchestrator/src/run/run-manager.ts"]),
    );
    const offenders = [...uses].flatMap(([file, found]) =>
      found.filter((use) => !OWNERS[use.split(" ")[0]!]![file] && !PENDING[file]).map((use) => `${file}: ${use}`),
    );
    expect(offenders).toEqual([]);
  });

  it("lists no pending second parse that is already gone", () => {
    const gone = Object.keys(PENDING).filter((file) => (uses.get(file) ?? []).length === 0);
    expect(gone, "remove these from PENDING").toEqual([]);
  });

  it("would notice one, and not a type", () => {
    const schema = new Set(["RunConfigSchema"]);
    expect(valueUses("const c = RunConfigSchema.parse(x);", schema)).toEqual(["RunConfigSchema (line 1)"]);
    expect(valueUses("export const T = RunConfigSchema.extend({});", schema)).toHaveLength(1);
    expect(valueUses('import { RunConfigSchema } from "x";\ntype C = z.infer<typeof RunConfigSchema>;', schema)).toEqual([]);
    expect(valueUses('export { RunConfigSchema } from "./run-config.js";', schema)).toEqual([]);
  });
});
