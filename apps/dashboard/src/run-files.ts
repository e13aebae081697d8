// The run artefacts the page links to, and nothing else: /files/<run>/checkpoints/<step>/ and
// /files/<run>/adapters/<version>/ for a checkpoint or adapter the orchestrator lists for that
// run (GetRun), a listing of that directory, and the regular files inside it. Every path
// resolves under the runs directory through the kit's PathRoot, and no symlink is followed,
// wherever it stands (the run's folder, the step's, a file): a planted `step-9 -> /etc`, or
// a file pointing at another run's, is refused.
import type { ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { isSafeName, PathError, type DirectoryEntry, type OpenedFile, type PathRoot } from "@lean-grpo/kit";
import { escapeHtml } from "./page-html.js";

/** The directories of a run the page links into (GetRun's checkpoints and adapters). */
const AREAS = new Set(["checkpoints", "adapters"]);
/** Below a listed checkpoint or adapter: a checkpoint's adapter/ and its files. */
const MAX_DEPTH_BELOW_ENTRY = 2;

export interface RunFiles {
  root: PathRoot;
  /** The run's checkpoints and adapters as GetRun names them ("checkpoints/step-10"); throws when there is no such run. */
  listed(runId: string): Promise<readonly string[]>;
}

export async function serveRunFile(files: RunFiles, relative: string, response: ServerResponse): Promise<void> {
  const decoded = decodePath(relative);
  if (decoded === undefined) return plain(response, 400, "malformed %-escape in the path\n");
  const parts = decoded.split("/").filter(Boolean);
  const [runId, area, entry, ...below] = parts;
  if (!runId || !area || !entry || !AREAS.has(area) || below.length > MAX_DEPTH_BELOW_ENTRY || !parts.every(isSafeName)) {
    return plain(response, 404, "only a run's listed checkpoints/<step>/ and adapters/<version>/ are served\n");
  }
  const listed = await files.listed(runId).catch(() => undefined);
  if (!listed?.includes(`${area}/${entry}`)) return plain(response, 404, `${area}/${entry} is not an artefact of that run\n`);

  const shown = parts.join("/");
  let found: Found;
  try {
    found = await findUnderRoot(files.root, parts);
  } catch (error) {
    if (error instanceof PathError) return plain(response, error.code === "missing" ? 404 : 403, `${error.message}\n`);
    throw error;
  }
  if (found.kind === "directory") {
    const items = found.entries
      .filter(isServable)
      .map((e) => {
        const name = `${e.name}${e.kind === "directory" ? "/" : ""}`;
        return `<li><a href="${encodeURIComponent(e.name)}${e.kind === "directory" ? "/" : ""}">${escapeHtml(name)}</a></li>`;
      })
      .join("");
    response.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": "default-src 'none'",
      "x-content-type-options": "nosniff",
    });
    response.end(`<!doctype html><meta charset="utf-8"><title>${escapeHtml(shown)}</title><h1>${escapeHtml(shown)}</h1><ul>${items}</ul>`);
    return;
  }
  const { handle, size } = found.opened;
  response.writeHead(200, {
    "content-type": "application/octet-stream",
    "content-length": size,
    "content-disposition": `attachment; filename="${parts.at(-1)}"`,
    "x-content-type-options": "nosniff",
  });
  if (size === 0) {
    await handle.close();
    response.end();
    return;
  }
  // No more than the size announced, even if the file grows meanwhile; the stream closes the descriptor.
  await pipeline(handle.createReadStream({ start: 0, end: size - 1 }), response);
}

/** A directory's entries, or a regular file opened for reading (close its handle). */
type Found = { kind: "directory"; entries: DirectoryEntry[] } | { kind: "file"; opened: OpenedFile };

/**
 * runs_dir/<parts>, reached through the kit's walk: each name opened from the directory
 * before it, a symlink anywhere refused (one swapped in after `kind` looked is refused by the
 * open itself), and a file only if it is a regular one.
 */
async function findUnderRoot(root: PathRoot, parts: readonly string[]): Promise<Found> {
  const name = parts.at(-1)!;
  return root.withDirectory(parts.slice(0, -1).join("/"), "path", {}, async (parent): Promise<Found> => {
    const kind = await parent.kind(name);
    if (kind === "directory") return { kind, entries: await parent.withDirectory(name, {}, (directory) => directory.entries()) };
    return { kind: "file", opened: await parent.openFile(name) };
  });
}

/** A listing shows what can be fetched: regular files and directories with plain names, never a symlink. */
function isServable(entry: DirectoryEntry): boolean {
  return (entry.kind === "file" || entry.kind === "directory") && isSafeName(entry.name);
}

function plain(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  response.end(text);
}

/** The path with its %-escapes decoded; undefined when one is malformed ("%zz", a lone "%", bad UTF-8). */
function decodePath(relative: string): string | undefined {
  try {
    return decodeURIComponent(relative);
  } catch {
    return undefined;
  }
}
