// The race a check-then-use resolver loses: a name swapped for a symlink after it was
// checked and before it is used. `open` is wrapped so that the swap happens exactly there,
// on the call that would follow it, which makes the interleaving deterministic.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { useDescriptorPaths } from "./descriptor-paths.js";
import { PathError, PathRoot } from "./index.js";

const hook = vi.hoisted(() => ({ beforeOpen: undefined as ((target: string) => void) | undefined }));

vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs/promises")>();
  const open: typeof actual.open = async (target, ...rest) => {
    const swap = hook.beforeOpen;
    if (swap) swap(String(target));
    return actual.open(target, ...rest);
  };
  return { ...actual, open, default: { ...actual, open } };
});

let base: string;
let root: PathRoot;
const SECRET = "SECRET-0f3a\n";

beforeEach(() => {
  base = mkdtempSync(path.join(tmpdir(), "root-race-"));
  mkdirSync(path.join(base, "root", "runs", "r1"), { recursive: true });
  mkdirSync(path.join(base, "outside", "r1"), { recursive: true });
  writeFileSync(path.join(base, "secret.txt"), SECRET);
  writeFileSync(path.join(base, "root", "runs", "r1", "run.json"), "{}");
  root = new PathRoot({ dir: path.join(base, "root"), key: "runs_dir" });
});
afterEach(() => {
  const swapped = hook.beforeOpen === undefined;
  hook.beforeOpen = undefined;
  expect(swapped, "the swap happened").toBe(true);
  expect(readdirSync(path.join(base, "outside", "r1"))).toEqual([]);
  expect(readFileSync(path.join(base, "secret.txt"), "utf8")).toBe(SECRET);
  rmSync(base, { recursive: true, force: true });
});
afterAll(() => useDescriptorPaths(true));

/** Runs `swap` once, on the first open whose path ends with `suffix`. */
function swapBefore(suffix: string, swap: () => void): void {
  hook.beforeOpen = (target) => {
    if (!target.endsWith(suffix)) return;
    hook.beforeOpen = undefined;
    swap();
  };
}

const runsSwappedForSymlink = () => {
  renameSync(path.join(base, "root", "runs"), path.join(base, "root", "runs-moved"));
  symlinkSync(path.join(base, "outside"), path.join(base, "root", "runs"));
};

describe("a symlink swapped in between the walk's steps", () => {
  it("with descriptor paths: the walk goes on in the directory it opened, wherever that moved", async () => {
    useDescriptorPaths(true);
    swapBefore("/r1", runsSwappedForSymlink);
    await root.withDirectory("runs/r1", "run_id", {}, (run) => run.writeFile("run.json", '{"state":"RUNNING"}'));
    expect(readFileSync(path.join(base, "root", "runs-moved", "r1", "run.json"), "utf8")).toBe('{"state":"RUNNING"}');
  });

  it("in the lstat fallback: the open is not what was checked, and is refused", async () => {
    useDescriptorPaths(false);
    swapBefore("/r1", runsSwappedForSymlink);
    const error = await root.withDirectory("runs/r1", "run_id", {}, () => Promise.resolve()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PathError);
    expect((error as PathError).message).toBe('run_id "runs/r1" is a symlink; symlinks inside runs_dir are refused');
  });

  it.each([true, false])("a file swapped for a symlink just before it is opened is refused (descriptor paths: %s)", async (descriptors) => {
    useDescriptorPaths(descriptors);
    swapBefore("run.json", () => {
      rmSync(path.join(base, "root", "runs", "r1", "run.json"));
      symlinkSync(path.join(base, "secret.txt"), path.join(base, "root", "runs", "r1", "run.json"));
    });
    const error = await root.readText("runs/r1/run.json", "run_id", 1024).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PathError);
    expect((error as PathError).message).toBe('run_id "runs/r1/run.json" is a symlink; symlinks inside runs_dir are refused');
  });

  it.each([true, false])(
    "a symlink put in place of a file being replaced is replaced, not written through (descriptor paths: %s)",
    async (descriptors) => {
      useDescriptorPaths(descriptors);
      const target = path.join(base, "root", "runs", "r1", "run.json");
      swapBefore(".tmp", () => {
        rmSync(target);
        symlinkSync(path.join(base, "secret.txt"), target);
      });
      await root.withDirectory("runs/r1", "run_id", {}, (run) => run.writeFile("run.json", '{"state":"DONE"}'));
      expect(readFileSync(target, "utf8")).toBe('{"state":"DONE"}');
      expect(existsSync(path.join(base, "outside", "run.json"))).toBe(false);
    },
  );
});
