// A fresh Lake project per replay, so that nothing a solution's build wrote can
// reach the next check (comparator's assumption: no adversarial file was built in
// the project before). It is made from the workspace template the image prepares
// (deploy/docker/lean-verifier.Dockerfile): the template's top-level files
// (lakefile.toml, lean-toolchain, lake-manifest.json) are copied, and its
// `.lake/packages` (Mathlib and its dependencies, built, owned by root) is linked,
// not copied, so a check costs no Mathlib build and cannot write Mathlib's files.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { CHALLENGE_MODULE, SOLUTION_MODULE, type ReplayModules } from "./replay-modules.js";

export const CONFIG_FILE = "comparator.json";

export interface CheckDirectory {
  path: string;
  remove(): Promise<void>;
}

export function makeCheckDirectory(parent: string, workspace: string | undefined, modules: ReplayModules): CheckDirectory {
  const path = mkdtempSync(join(parent, "lean-grpo-replay-"));
  if (workspace !== undefined) {
    for (const entry of readdirSync(workspace, { withFileTypes: true })) {
      if (entry.isFile()) copyFileSync(join(workspace, entry.name), join(path, entry.name));
    }
    const packages = join(workspace, ".lake", "packages");
    if (existsSync(packages)) {
      mkdirSync(join(path, ".lake"));
      symlinkSync(packages, join(path, ".lake", "packages"), "dir");
    }
  }
  writeFileSync(join(path, `${CHALLENGE_MODULE}.lean`), modules.challenge);
  writeFileSync(join(path, `${SOLUTION_MODULE}.lean`), modules.solution);
  writeFileSync(join(path, CONFIG_FILE), `${JSON.stringify(modules.config, null, 2)}\n`);
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
