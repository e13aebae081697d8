// The page's script and styles, bundled from src/browser/ with esbuild on first use (about a
// quarter of a second), so the dashboard works straight after `npm ci` with no build step.
// Kept in memory for the process: every report.html and every page load reuses it.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

export interface PageAssets {
  /** The page's script: an ES2020 IIFE with connect-web, uPlot and the generated messages inside. */
  js: string;
  /** uPlot's styles and the page's own. */
  css: string;
}

const ENTRY = fileURLToPath(new URL("./browser/main.ts", import.meta.url));
let bundled: Promise<PageAssets> | undefined;

export function pageAssets(): Promise<PageAssets> {
  bundled ??= bundlePage().catch((error: unknown) => {
    bundled = undefined; // a failed build (a file being edited) is retried next time
    throw error;
  });
  return bundled;
}

async function bundlePage(): Promise<PageAssets> {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "es2020",
    minify: true,
    legalComments: "none",
    outdir: "out",
    logLevel: "silent",
  });
  const js = result.outputFiles.find((f) => f.path.endsWith(".js"))?.text;
  const css = result.outputFiles.find((f) => f.path.endsWith(".css"))?.text;
  if (js === undefined || css === undefined) throw new Error("esbuild gave no script or no stylesheet for the dashboard page");
  return { js, css };
}
