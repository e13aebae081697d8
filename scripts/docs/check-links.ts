// Checks every internal link of the built docs site (docs/.vitepress/dist): each href and src
// that stays on the site must name a file the build wrote, and a #fragment must name an id on
// that page. VitePress checks links between Markdown pages as it builds; this also covers the
// sidebar and nav, headings' anchors, images and links inside included files, as a browser sees them.
//   npm run docs:build && npm run docs:links
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const dist = fileURLToPath(new URL("../../docs/.vitepress/dist/", import.meta.url));

function htmlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return htmlFiles(full);
    return name.endsWith(".html") ? [full] : [];
  });
}

/** The ids a page defines (heading anchors and any element's id). */
const idsOf = new Map<string, Set<string>>();
function ids(file: string): Set<string> {
  let found = idsOf.get(file);
  if (!found) {
    found = new Set([...readFileSync(file, "utf8").matchAll(/\sid="([^"]+)"/gu)].map((m) => decodeURIComponent(m[1]!)));
    idsOf.set(file, found);
  }
  return found;
}

/** The built file a site path names: /guide/x.html, /guide/x (clean URL), /guide/ (its index). */
function targetFile(sitePath: string): string | undefined {
  const plain = path.join(dist, decodeURIComponent(sitePath));
  const candidates = sitePath.endsWith("/") ? [path.join(plain, "index.html")] : [plain, `${plain}.html`, path.join(plain, "index.html")];
  return candidates.find((file) => existsSync(file) && statSync(file).isFile());
}

if (!existsSync(dist)) {
  process.stderr.write("docs/.vitepress/dist is missing: run `npm run docs:build` first\n");
  process.exit(1);
}

const problems: string[] = [];
let checked = 0;
for (const file of htmlFiles(dist)) {
  const page = `/${path.relative(dist, file).split(path.sep).join("/")}`;
  const html = readFileSync(file, "utf8");
  for (const match of html.matchAll(/\s(?:href|src)="([^"]*)"/gu)) {
    const link = match[1]!.replace(/&amp;/gu, "&");
    if (link === "" || /^[a-z][a-z0-9+.-]*:/iu.test(link) || link.startsWith("//")) continue; // another site, mailto:, data:
    checked++;
    const [rawPath, fragment] = link.split("#", 2) as [string, string | undefined];
    const sitePath = rawPath === "" ? page : rawPath.startsWith("/") ? rawPath : path.posix.join(path.posix.dirname(page), rawPath);
    const target = targetFile(sitePath.split("?")[0]!);
    if (!target) {
      problems.push(`${page}: ${link} names no file of the site`);
      continue;
    }
    if (fragment && target.endsWith(".html") && !ids(target).has(decodeURIComponent(fragment))) {
      problems.push(`${page}: ${link}: no id "${fragment}" on ${path.relative(dist, target)}`);
    }
  }
}

if (problems.length > 0) {
  process.stderr.write(`${problems.length} broken link(s) in the built site:\n${problems.join("\n")}\n`);
  process.exit(1);
}
process.stdout.write(`${checked} internal links of the built site resolve\n`);
