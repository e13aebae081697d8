// Compiles one service for its image: services/<service>/src/server.ts, the kit's health
// probe and the worker threads the service starts (the learner's gradient threads, the verifier's screen threads), each into one ES module under services/<service>/dist/ (esbuild), with the
// workspaces' TypeScript (@lean-grpo/*) bundled in and every npm package left as an import
// that node resolves from node_modules at run time. The image then starts plain JavaScript:
// no tsx, no TypeScript sources, no compile step at each start.
//
//   node deploy/docker/bundle-service.mjs SERVICE [ROOT]     e.g.  node deploy/docker/bundle-service.mjs reward
//
// ROOT is the repository root (default: the working directory). esbuild comes from the
// repository's devDependencies (through tsx), so run it where those are installed.
import path from "node:path";
import { build } from "esbuild";

const [service, root = process.cwd()] = process.argv.slice(2);
if (!service) {
  process.stderr.write("usage: node deploy/docker/bundle-service.mjs SERVICE [ROOT]\n");
  process.exit(2);
}
const outdir = path.join(root, "services", service, "dist");

/** Workspace code (@lean-grpo/*, relative imports) is bundled; npm packages stay imports. */
const npmPackagesExternal = {
  name: "npm-packages-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith("@lean-grpo/") || path.isAbsolute(args.path) ? undefined : { path: args.path, external: true },
    );
  },
};

/** Worker-thread entries a service starts beside its server (found next to server.mjs at run time). */
const THREAD_ENTRIES = {
  // The learner's gradient threads (services/learner/src/threads/gradient-threads.ts).
  learner: { "gradient-worker": "services/learner/src/threads/gradient-worker.ts" },
  // The verifier's screen threads (services/verifier/src/screen/screen-threads.ts).
  verifier: { "screen-thread": "services/verifier/src/screen/screen-thread-main.ts" },
};
const threadEntries = Object.fromEntries(
  Object.entries(THREAD_ENTRIES[service] ?? {}).map(([name, file]) => [name, path.join(root, file)]),
);

await build({
  absWorkingDir: root,
  entryPoints: {
    server: path.join(root, "services", service, "src/server.ts"),
    "health-probe": path.join(root, "packages/kit/src/bin/health-probe.ts"),
    ...threadEntries,
  },
  outdir,
  outExtension: { ".js": ".mjs" },
  bundle: true,
  // One file per entry point: no shared chunks to keep beside them.
  splitting: false,
  platform: "node",
  format: "esm",
  target: "node20",
  logLevel: "warning",
  plugins: [npmPackagesExternal],
});
const written = ["server", "health-probe", ...Object.keys(threadEntries)].map((name) => `${name}.mjs`);
process.stdout.write(`${path.relative(root, outdir)}/${written.join(", ")}\n`);
