// A run's checkpoints and adapters for the page's links: a listing of a directory, or the
// file, only under <runs>/<id>/checkpoints/ and <runs>/<id>/adapters/, never outside.
import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import path from "node:path";
import { escapeHtml } from "./page-html.js";

const SERVED = new Set(["checkpoints", "adapters"]);

export async function serveRunFile(runsDir: string, relative: string, response: ServerResponse): Promise<void> {
  const decoded = decodePath(relative);
  if (decoded === undefined) {
    response.writeHead(400, { "content-type": "text/plain; charset=utf-8" });
    response.end("malformed %-escape in the path\n");
    return;
  }
  const parts = decoded.split("/").filter(Boolean);
  const [runId, area] = parts;
  if (!runId || !area || !SERVED.has(area) || parts.some((p) => p === ".." || p === "." || p.includes("\\"))) {
    response.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
    response.end("only a run's checkpoints/ and adapters/ are served\n");
    return;
  }
  const file = path.join(path.resolve(runsDir), ...parts);
  try {
    const info = await stat(file);
    if (info.isDirectory()) {
      const entries = await readdir(file, { withFileTypes: true });
      const items = entries
        .map(
          (e) =>
            `<li><a href="${encodeURIComponent(e.name)}${e.isDirectory() ? "/" : ""}">${escapeHtml(e.name)}${e.isDirectory() ? "/" : ""}</a></li>`,
        )
        .join("");
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(
        `<!doctype html><meta charset="utf-8"><title>${escapeHtml(parts.join("/"))}</title><h1>${escapeHtml(parts.join("/"))}</h1><ul>${items}</ul>`,
      );
      return;
    }
    response.writeHead(200, { "content-type": "application/octet-stream", "content-length": info.size });
    createReadStream(file).pipe(response);
  } catch {
    response.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
    response.end(`${parts.join("/")} not found\n`);
  }
}

/** The path with its %-escapes decoded; undefined when one is malformed ("%zz", a lone "%", bad UTF-8). */
function decodePath(relative: string): string | undefined {
  try {
    return decodeURIComponent(relative);
  } catch {
    return undefined;
  }
}
