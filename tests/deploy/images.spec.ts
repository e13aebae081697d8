// One image per service, each holding only its service and the workspaces that
// service runs with. Two halves, both able to fail:
// - the cut: deploy/docker/prune.sh (what the Dockerfiles run) is run here on a copy
//   of the repository, and what it leaves is compared with the workspace closure of
//   each service's `dependencies`, computed here from the package.json files;
// - the Dockerfiles: each image target gets files only from its own service's cut
//   (and its config file), starts that service's src/server.ts, probes its port.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { repoRoot } from "../support/interop-verifier.js";
import { baseChain, imageProblems, parseDockerfile } from "./dockerfile.js";

const SERVICES = { inference: 50051, verifier: 50052, reward: 50053, learner: 50054, orchestrator: 50055 } as const;
type Service = keyof typeof SERVICES;
const NAMES = Object.keys(SERVICES) as Service[];

const read = (file: string) => readFileSync(path.join(repoRoot, file), "utf8");
const json = (file: string) => JSON.parse(readFileSync(file, "utf8"));
const serviceDockerfile = read("deploy/docker/service.Dockerfile");
const leanVerifierDockerfile = read("deploy/docker/lean-verifier.Dockerfile");

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** Workspace folder (relative) by package name, from the root's `workspaces` globs. */
function workspaceFolders(root: string): Map<string, string> {
  const folders = new Map<string, string>();
  for (const pattern of json(path.join(root, "package.json")).workspaces as string[]) {
    const dirs = pattern.endsWith("/*")
      ? readdirSync(path.join(root, pattern.slice(0, -2))).map((d) => `${pattern.slice(0, -2)}/${d}`)
      : [pattern];
    for (const dir of dirs) {
      const file = path.join(root, dir, "package.json");
      if (existsSync(file)) folders.set((json(file) as Manifest).name, dir);
    }
  }
  return folders;
}

/** The folders of a service and every workspace its `dependencies` reach (not devDependencies). */
function runtimeClosure(root: string, service: Service): string[] {
  const folders = workspaceFolders(root);
  const seen = new Set<string>();
  const visit = (name: string) => {
    const dir = folders.get(name);
    if (dir === undefined || seen.has(dir)) return;
    seen.add(dir);
    const manifest = json(path.join(root, dir, "package.json")) as Manifest;
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dep);
  };
  visit(`@lean-grpo/${service}`);
  return [...seen].sort();
}

/** The workspace folders present in a pruned tree (every folder holding a package.json, but the root). */
function workspacesIn(tree: string): string[] {
  return (readdirSync(tree, { recursive: true }) as string[])
    .filter((f) => path.basename(f) === "package.json" && path.dirname(f) !== "." && !f.includes("node_modules"))
    .map((f) => path.dirname(f).split(path.sep).join("/"))
    .sort();
}

/** Test files left in a pruned tree. */
function testFilesIn(tree: string): string[] {
  return (readdirSync(tree, { recursive: true }) as string[]).filter((f) => {
    const base = path.basename(f);
    return (
      (base === "test" && statSync(path.join(tree, f)).isDirectory()) ||
      base.endsWith(".spec.ts") ||
      base.endsWith(".test.ts") ||
      base === "vitest.config.ts"
    );
  });
}

const turboBin = path.join(repoRoot, "node_modules/.bin");
const turbo = spawnSync(path.join(turboBin, "turbo"), ["--version"], { encoding: "utf8" }).status === 0;
if (!turbo) console.warn("skipping the image prune tests: turbo is not installed (npm install at the repository root)");

describe.skipIf(!turbo)("each image's cut of the monorepo (deploy/docker/prune.sh)", () => {
  let work = "";
  let copy = "";
  const env = { ...process.env, PATH: `${turboBin}${path.delimiter}${process.env.PATH}`, TURBO_TELEMETRY_DISABLED: "1" };

  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), "lean-grpo-prune-"));
    copy = path.join(work, "repo");
    // What prune.sh reads, as the Dockerfiles' prune stage has it (less node_modules).
    for (const entry of [
      "package.json",
      "package-lock.json",
      ".npmrc",
      "turbo.json",
      "tsconfig.base.json",
      "gen",
      "packages",
      "services",
      "apps",
      "tests",
      "deploy/docker/prune.sh",
      "deploy/docker/bundle-service.mjs",
    ]) {
      if (!existsSync(path.join(repoRoot, entry))) continue;
      cpSync(path.join(repoRoot, entry), path.join(copy, entry), {
        recursive: true,
        filter: (source) => !source.split(path.sep).includes("node_modules"),
      });
    }
    // First, plain `turbo prune` (no prune.sh) of reward, for the test that shows the check fails.
    execFileSync("turbo", ["prune", "@lean-grpo/reward", "--docker", "--out-dir", path.join(work, "plain-reward")], {
      cwd: copy,
      env,
      stdio: "pipe",
    });
    for (const service of NAMES) {
      execFileSync("sh", ["deploy/docker/prune.sh", service, path.join(work, service)], { cwd: copy, env, stdio: "pipe" });
    }
  }, 120_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it.each(NAMES)("%s: holds exactly the workspaces its dependencies reach", (service) => {
    const expected = runtimeClosure(repoRoot, service);
    expect(expected).toContain(`services/${service}`);
    expect(expected).toContain("packages/kit");
    expect(workspacesIn(path.join(work, service, "json")), "manifests (json/)").toEqual(expected);
    expect(workspacesIn(path.join(work, service, "full")), "sources (full/)").toEqual(expected);
    // The lockfile it installs from names no other workspace either.
    const lock = json(path.join(work, service, "json", "package-lock.json"));
    const lockedWorkspaces = Object.keys(lock.packages)
      .filter((key) => key !== "" && !key.includes("node_modules"))
      .sort();
    expect(lockedWorkspaces).toEqual(expected);
  });

  it.each(NAMES)("%s: leaves tests out and keeps what the image runs with", (service) => {
    const full = path.join(work, service, "full");
    expect(testFilesIn(full)).toEqual([]);
    // What the build stage compiles, and what compiles it.
    expect(existsSync(path.join(full, `services/${service}/src/server.ts`))).toBe(true);
    expect(existsSync(path.join(full, "packages/kit/src/bin/health-probe.ts"))).toBe(true);
    expect(existsSync(path.join(full, "deploy/docker/bundle-service.mjs"))).toBe(true);
    // The image runs compiled JavaScript: no workspace it installs for production needs tsx.
    for (const dir of workspacesIn(path.join(work, service, "json"))) {
      const manifest = json(path.join(work, service, "json", dir, "package.json")) as Manifest;
      expect(manifest.dependencies?.tsx, `${dir}/package.json dependencies.tsx`).toBeUndefined();
    }
  });

  it("fails on a plain `turbo prune`, which keeps the root's and the devDependencies' workspaces (the check can fail)", () => {
    const plain = workspacesIn(path.join(work, "plain-reward", "full"));
    expect(plain).not.toEqual(runtimeClosure(repoRoot, "reward"));
    // The root depends on the CLI, and the CLI on every service.
    expect(plain).toEqual(expect.arrayContaining(["apps/lean-grpo", "services/learner"]));
  });
});

describe("deploy/docker/service.Dockerfile", () => {
  const stages = parseDockerfile(serviceDockerfile);

  it.each(NAMES)("target %s holds only its service's cut and starts its own server.ts", (service) => {
    expect(imageProblems(serviceDockerfile, { service, target: service, port: SERVICES[service] })).toEqual([]);
  });

  it("builds every target on distroless Node 20 (nonroot) and the cut with the repository's turbo", () => {
    for (const service of NAMES) {
      expect(baseChain(stages, service).at(-1), service).toBe("gcr.io/distroless/nodejs20-debian12:nonroot");
    }
    const turboVersion = json(path.join(repoRoot, "package.json")).devDependencies.turbo;
    for (const text of [serviceDockerfile, leanVerifierDockerfile]) {
      expect(text).toMatch(new RegExp(`^ARG TURBO_VERSION=${turboVersion.replace(/\./g, "\\.")}$`, "m"));
    }
  });

  it("finds what is wrong in a broken Dockerfile (the check can fail)", () => {
    const cases: Array<[string, (text: string) => string, RegExp]> = [
      [
        "another service's cut",
        (t) => t.replace("COPY --from=prune /out/learner/full/ ./", "COPY --from=prune /out/inference/full/ ./"),
        /not learner's cut/,
      ],
      [
        "the repository's sources",
        (t) => t.replace("FROM runtime AS learner\n", "FROM runtime AS learner\nCOPY services services\n"),
        /build context/,
      ],
      ["the whole prune stage", (t) => t.replace("FROM install AS learner-app", "FROM prune AS learner-app"), /derives FROM prune/],
      [
        "another service's server",
        (t) => t.replace(`"services/learner/dist/server.mjs"`, `"services/reward/dist/server.mjs"`),
        /not \["services\/learner\/dist\/server.mjs"/,
      ],
      [
        "the CLI",
        (t) => t.replace(/CMD \["services\/learner[^\n]*/, `CMD ["apps/lean-grpo/bin/lean-grpo.mjs", "serve", "learner"]`),
        /starts/,
      ],
      ["no cut for the service", (t) => t.replace("RUN sh deploy/docker/prune.sh learner /out/learner\n", ""), /does not run/],
      [
        "TypeScript through tsx",
        (t) => t.replace(`CMD ["services/learner/dist/server.mjs",`, `CMD ["--import", "tsx", "services/learner/src/server.ts",`),
        /not \["services\/learner\/dist\/server.mjs"/,
      ],
      ["no compile step", (t) => t.replace("RUN node deploy/docker/bundle-service.mjs learner\n", ""), /no compiled service/],
    ];
    for (const [what, breakIt, problem] of cases) {
      const broken = breakIt(serviceDockerfile);
      expect(broken, what).not.toBe(serviceDockerfile);
      const problems = imageProblems(broken, { service: "learner", target: "learner", port: SERVICES.learner });
      expect(problems.join("\n"), what).toMatch(problem);
    }
  });
});

describe("deploy/docker/lean-verifier.Dockerfile", () => {
  it("holds only the verifier's cut on top of Lean, and starts the verifier compiled from its server.ts", () => {
    expect(imageProblems(leanVerifierDockerfile, { service: "verifier", port: SERVICES.verifier })).toEqual([]);
    expect(
      imageProblems(leanVerifierDockerfile.replace("/out/verifier/full/", "/out/learner/full/"), { service: "verifier", port: 50052 }),
    ).not.toEqual([]);
  });
});
