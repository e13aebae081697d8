// Writes docs/reference/config.md from the config schemas (apps/lean-grpo/src/config-reference/).
//   npm run docs:config            regenerate the page
//   npm run docs:config -- --check fail when the committed page is not what the schemas say now
import { readFileSync, writeFileSync } from "node:fs";
import { configReference } from "../../apps/lean-grpo/src/config-reference/config-reference.js";
import { configMarkdown } from "../../apps/lean-grpo/src/config-reference/config-markdown.js";

const page = new URL("../../docs/reference/config.md", import.meta.url);
const text = configMarkdown(configReference());
if (process.argv.includes("--check")) {
  let committed = "";
  try {
    committed = readFileSync(page, "utf8");
  } catch {}
  if (committed !== text) {
    process.stderr.write("docs/reference/config.md is stale: run 'npm run docs:config' and commit the result.\n");
    process.exit(1);
  }
  process.stdout.write("docs/reference/config.md is up to date\n");
} else {
  writeFileSync(page, text);
  process.stdout.write(`wrote docs/reference/config.md (${text.split("\n").length} lines)\n`);
}
