// The run artefacts the page links to, and nothing else: /files/<run>/checkpoints/<step>/ and
// /files/<run>/adapters/<version>/ for a checkpoint or adapter the orchestrator lists for that
// run (GetRun), a listing of that directory, and the regular files inside it. Every path
// resolves under the runs directory through the kit's PathRoot, and no symlink is followed,
// wherever it stands (the run's folder, the step's, a file): a planted `step-9 -> /etc`, or
// a file pointing at another run's, is refused.
import { constants, type Dirent, type Stats } from "node:fs";
import { lstat, open, readdir, readlink, realpath, type FileHandle } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { isSafeName, PathError, type PathRoot } from "@lean-grpo/kit";
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
  let opened: Opened;
  try {
    opened = await openWithoutSymlinks(files.root, parts);
  } catch (error) {
    if (error instanceof PathError) return plain(response, error.code === "missing" ? 404 : 403, `${error.message}\n`);
    throw error;
  }
  if (opened.info.isDirectory()) {
    try {
      const entries = (await readdir(opened.listPath, { withFileTypes: true })).filter(isServable);
      const items = entries
        .map((e) => {
          const name = `${e.name}${e.isDirectory() ? "/" : ""}`;
          return `<li><a href="${encodeURIComponent(e.name)}${e.isDirectory() ? "/" : ""}">${escapeHtml(name)}</a></li>`;
        })
        .join("");
      response.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": "default-src 'none'",
        "x-content-type-options": "nosniff",
      });
      response.end(
        `<!doctype html><meta charset="utf-8"><title>${escapeHtml(shown)}</title><h1>${escapeHtml(shown)}</h1><ul>${items}</ul>`,
      );
    } finally {
      await opened.handle.close();
    }
    return;
  }
  response.writeHead(200, {
    "content-type": "application/octet-stream",
    "content-length": opened.info.size,
    "content-disposition": `attachment; filename="${parts.at(-1)}"`,
    "x-content-type-options": "nosniff",
  });
  if (opened.info.size === 0) {
    await opened.handle.close();
    response.end();
    return;
  }
  // No more than the size announced, even if the file grows meanwhile; the stream closes the descriptor.
  await pipeline(opened.handle.createReadStream({ start: 0, end: opened.info.size - 1 }), response);
}

interface Opened {
  handle: FileHandle;
  info: Stats;
  /** Where to list a directory from: the opened descriptor itself where the system names it. */
  listPath: string;
}

/**
 * Opens runs_dir/<parts> as PathRoot resolves it, after checking that no part is a symlink
 * (lstat, from the root down), with O_NOFOLLOW on the last; on Linux the descriptor's own path
 * (/proc/self/fd/N) must then be the one asked for, so a part swapped for a symlink between
 * the check and the open is caught too.
 */
async function openWithoutSymlinks(root: PathRoot, parts: readonly string[]): Promise<Opened> {
  const field = "path";
  const given = parts.join("/");
  root.resolve(given, field); // the kit's text rules (relative, no "..", no NUL) before the disk is touched
  const realRoot = await realpath(root.dir).catch(() => {
    throw new PathError(`${field}: ${root.key} does not exist on this server`, field, "missing");
  });
  let info: Stats | undefined;
  for (let i = 1; i <= parts.length; i++) {
    info = await lstat(path.join(realRoot, ...parts.slice(0, i))).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" || error.code === "ENOTDIR")
        throw new PathError(`${field} "${given}" does not exist under ${root.key}`, field, "missing");
      throw new PathError(`${field} "${given}" cannot be read (${error.code ?? "error"})`, field, "invalid");
    });
    if (info.isSymbolicLink()) throw symlinkRefused(parts.slice(0, i).join("/"), field);
  }
  // And the kit's own checks of what is there (inside the root, a regular file where a file is read).
  await root.existing(given, field, info?.isDirectory() ? "directory" : "file");
  const expected = path.join(realRoot, ...parts);
  const handle = await open(expected, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    (error: NodeJS.ErrnoException) => {
      throw error.code === "ELOOP"
        ? symlinkRefused(given, field)
        : new PathError(`${field} "${given}" cannot be opened (${error.code ?? "error"})`, field, "invalid");
    },
  );
  try {
    const viaProc = `/proc/self/fd/${handle.fd}`;
    const opened = await readlink(viaProc).catch(() => undefined);
    if (opened !== undefined && opened !== expected) throw symlinkRefused(given, field);
    const stats = await handle.stat();
    if (!stats.isFile() && !stats.isDirectory())
      throw new PathError(`${field} "${given}" is not a regular file or a directory`, field, "invalid");
    return { handle, info: stats, listPath: opened === undefined ? expected : viaProc };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** A listing shows what can be fetched: regular files and directories with plain names, never a symlink. */
function isServable(entry: Dirent): boolean {
  return (entry.isFile() || entry.isDirectory()) && isSafeName(entry.name);
}

function symlinkRefused(shown: string, field: string): PathError {
  return new PathError(`${field} "${shown}" is a symlink; the dashboard follows none`, field, "invalid");
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
