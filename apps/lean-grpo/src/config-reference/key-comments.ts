// The meaning of each config key, as its schema's author wrote it: the comment above the
// key in the zod object literal (`/** ... */`, or `//` lines). zod keeps no comments, so
// they are read from the TypeScript sources with the compiler's own parser, and joined to
// the schema's keys by name and by the object's other keys (two objects with a `url` key
// are told apart by their siblings).
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

export interface KeyComment {
  key: string;
  /** The keys written in the same object literal. */
  siblings: ReadonlySet<string>;
  text: string;
  /** Where it was written, relative to the repository. */
  source: string;
}

function schemaSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return ["node_modules", "dist", "test"].includes(entry.name) ? [] : schemaSources(full);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".spec.ts") ? [full] : [];
  });
}

/** The comment text before `node`, without its markers, on one line. */
function leadingComment(text: string, node: ts.Node): string | undefined {
  const ranges = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
  const lines = ranges.map((range) => {
    const raw = text.slice(range.pos, range.end);
    return range.kind === ts.SyntaxKind.MultiLineCommentTrivia
      ? raw
          .replace(/^\/\*\*?/u, "")
          .replace(/\*\/$/u, "")
          .split("\n")
          .map((line) => line.replace(/^\s*\*\s?/u, ""))
          .join(" ")
      : raw.replace(/^\/\/\s?/u, "");
  });
  const joined = lines.join(" ").replace(/\s+/gu, " ").trim();
  return joined === "" ? undefined : joined;
}

function propertyName(name: ts.PropertyName): string | undefined {
  return ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : undefined;
}

/** Every commented key of every object literal in the sources below `dirs`. */
export function readKeyComments(repoRoot: string, dirs: readonly string[]): KeyComment[] {
  const found: KeyComment[] = [];
  for (const file of dirs.flatMap((dir) => schemaSources(path.join(repoRoot, dir)))) {
    const text = readFileSync(file, "utf8");
    if (!text.includes("zod")) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isObjectLiteralExpression(node)) {
        const named = node.properties.flatMap((p) => (ts.isPropertyAssignment(p) ? [[p, propertyName(p.name)] as const] : []));
        const siblings = new Set(named.flatMap(([, name]) => (name ? [name] : [])));
        for (const [property, name] of named) {
          const comment = name ? leadingComment(text, property) : undefined;
          if (name && comment) found.push({ key: name, siblings, text: comment, source: path.relative(repoRoot, file) });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/**
 * The comment of `key` in the object literal most like the schema object holding it. The
 * literal's keys must mostly be the object's (a literal may be spread or extended into a
 * larger object, so the object can hold more); among those, the closest match wins.
 */
export function commentFor(comments: readonly KeyComment[], key: string, siblings: readonly string[]): string | undefined {
  const keys = new Set(siblings);
  let best: { score: number; text: string } | undefined;
  for (const comment of comments) {
    if (comment.key !== key) continue;
    const shared = [...comment.siblings].filter((s) => keys.has(s)).length;
    if (shared / comment.siblings.size < 0.5) continue;
    const score = shared / (comment.siblings.size + keys.size - shared);
    if (!best || score > best.score) best = { score, text: comment.text };
  }
  return best?.text;
}
