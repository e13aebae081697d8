// The docs site (VitePress): `npm run docs:dev` serves it with live reload, `npm run docs:build`
// writes docs/.vitepress/dist, `npm run docs:check-links` checks every link of the built pages.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig, type DefaultTheme } from "vitepress";

const docsDir = fileURLToPath(new URL("../", import.meta.url));

/** A sidebar entry for a page that may not be written yet: listed once its file exists. */
function ifWritten(item: DefaultTheme.SidebarItem): DefaultTheme.SidebarItem[] {
  return existsSync(`${docsDir}${item.link!.replace(/^\//u, "")}.md`) ? [item] : [];
}

const sidebar: DefaultTheme.SidebarItem[] = [
  {
    text: "Start",
    items: [
      { text: "Getting started", link: "/getting-started" },
      { text: "Commands", link: "/guide/commands" },
      { text: "Configuration", link: "/guide/configuration" },
    ],
  },
  {
    text: "Concepts",
    items: [
      { text: "The mesh", link: "/concepts/mesh" },
      { text: "The training loop", link: "/concepts/loop" },
      { text: "The verdict's three tiers", link: "/concepts/verdict" },
      { text: "Async rollouts", link: "/concepts/async-rollouts" },
      { text: "Rollout correction", link: "/concepts/rollout-correction" },
      { text: "Repair mode", link: "/concepts/repair-mode" },
      { text: "A model's prompt format", link: "/concepts/prompt-format" },
      ...ifWritten({ text: "Reasoning vocabulary", link: "/concepts/reasoning-vocabulary" }),
      ...ifWritten({ text: "Reasoning vocabulary: PyTorch and vLLM", link: "/concepts/reasoning-vocabulary-torch" }),
    ],
  },
  {
    text: "Guides",
    items: [
      { text: "Train on your own data", link: "/guide/own-data" },
      { text: "Train and evaluate a prover on a standard benchmark", link: "/guide/prover-benchmark" },
      { text: "vLLM and a GPU learner", link: "/guide/vllm-gpu" },
      { text: "The PyTorch learner", link: "/guide/pytorch-learner" },
      { text: "Deploy: Compose and Kubernetes", link: "/guide/deploy" },
      { text: "Trace with OTLP", link: "/guide/tracing" },
      ...ifWritten({ text: "Track runs: W&B, TensorBoard", link: "/guide/tracking" }),
      { text: "Call the services", link: "/guide/clients" },
      { text: "Add a scorer", link: "/guide/add-scorer" },
      { text: "Add an algorithm", link: "/guide/add-algorithm" },
      ...ifWritten({ text: "Security", link: "/guide/security" }),
      ...ifWritten({ text: "The seeds' commands", link: "/guide/seeds" }),
    ],
  },
  {
    text: "Reference",
    items: [
      { text: "Config keys", link: "/reference/config" },
      { text: "RPCs", link: "/reference/rpc" },
      { text: "Layout and import rules", link: "/reference/layout" },
      { text: "Benchmarks", link: "/benchmarks" },
      { text: "Dependencies", link: "/reference/dependencies" },
      { text: "About these docs", link: "/about-docs" },
    ],
  },
];

export default defineConfig({
  title: "lean-grpo",
  description: "GRPO-family reinforcement learning for Lean 4 theorem proving, as a gRPC service mesh",
  // The pages include files from the repository (deploy/README.md, services/learner-torch/README.md).
  srcExclude: ["**/README.md"],
  lastUpdated: false,
  // Pages name local endpoints (a trace UI on http://localhost:16686) that no build can reach.
  ignoreDeadLinks: "localhostLinks",
  themeConfig: {
    nav: [
      { text: "Getting started", link: "/getting-started" },
      { text: "Guides", link: "/guide/own-data" },
      { text: "Config", link: "/reference/config" },
      { text: "RPCs", link: "/reference/rpc" },
      { text: "Benchmarks", link: "/benchmarks" },
    ],
    sidebar,
    outline: { level: [2, 3] },
    // MiniSearch in the browser over an index built with the site: no service, works offline.
    search: { provider: "local" },
  },
});
