import { execFileSync } from "node:child_process";
import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useDescriptorPaths } from "./descriptor-paths.js";
import { checkSafeName, PathError, PathRoot } from "./index.js";

let base: string;
let root: PathRoot;
const SECRET = "TOPSECRET-line-one\nsecond-line-of-secret\n";

beforeAll(() => {
  base = mkdtempSync(path.join(tmpdir(), "path-root-"));
  mkdirSync(path.join(base, "root", "data"), { recursive: true });
  mkdirSync(path.join(base, "outside-dir"));
  writeFileSync(path.join(base, "root", "data", "ok.jsonl"), '{"a":1}\n');
  writeFileSync(path.join(base, "outside.txt"), SECRET);
  symlinkSync(path.join(base, "outside.txt"), path.join(base, "root", "escape.jsonl"));
  symlinkSync(path.join(base, "root", "data", "ok.jsonl"), path.join(base, "root", "inside-link.jsonl"));
  symlinkSync(path.join(base, "root", "data"), path.join(base, "root", "inside-dir"));
  symlinkSync(base, path.join(base, "root", "updir"));
  symlinkSync("/dev/zero", path.join(base, "root", "zero"));
  execFileSync("mkfifo", [path.join(base, "root", "fifo")]);
  writeFileSync(path.join(base, "root", "big.jsonl"), "x".repeat(2048));
  root = new PathRoot({ dir: path.join(base, "root"), key: "test.root" });
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

async function refusal(promise: Promise<unknown>): Promise<PathError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PathError);
  const refused = error as PathError;
  // Never what a file holds, never where a symlink points.
  expect(refused.message).not.toContain("TOPSECRET");
  expect(refused.message).not.toContain(base);
  return refused;
}

const outsideUntouched = () => {
  expect(readFileSync(path.join(base, "outside.txt"), "utf8")).toBe(SECRET);
  expect(readdirSync(path.join(base, "outside-dir"))).toEqual([]);
  expect(readdirSync(base).sort()).toEqual(["outside-dir", "outside.txt", "root"]);
};

// Every test runs twice: with /proc/self/fd descriptor paths (Linux), and in the fallback
// that compares each open with an lstat (other systems).
describe.each([
  ["descriptor paths", true],
  ["the lstat fallback", false],
])("PathRoot with %s", (_mode, descriptors) => {
  beforeAll(() => useDescriptorPaths(descriptors));
  afterAll(() => useDescriptorPaths(true));
  afterEach(outsideUntouched);

  it("reads a regular file under the root", async () => {
    expect(await root.readText("data/ok.jsonl", "dataset_path", 1024)).toBe('{"a":1}\n');
    expect(await root.readText("./data//ok.jsonl", "dataset_path", 1024)).toBe('{"a":1}\n');
  });

  it("refuses absolute paths and .. segments by their text, naming the field", async () => {
    for (const given of ["/etc/passwd", "/proc/self/environ", path.join(base, "root", "data", "ok.jsonl")]) {
      const error = (await root.readText(given, "dataset_path", 1024).catch((e: unknown) => e)) as PathError;
      expect(error).toBeInstanceOf(PathError);
      expect(error.code).toBe("invalid");
      expect(error.message).toMatch(/^dataset_path ".*" is absolute; give a path relative to test\.root$/);
    }
    for (const given of ["..", "../outside.txt", "data/../../outside.txt", "data\\..\\..\\outside.txt"]) {
      const error = await refusal(root.readText(given, "eval.data", 1024));
      expect(error.message).toContain('contains ".."');
      expect(error.field).toBe("eval.data");
    }
    expect((await refusal(root.readText("", "dataset_path", 1))).message).toBe("dataset_path is empty; give a path relative to test.root");
    expect((await refusal(root.readText("a\0b", "dataset_path", 1))).message).toContain("NUL");
  });

  it("refuses every symlink inside the root, out of it or not, naming it and nothing it points to", async () => {
    const cases: [string, string][] = [
      ["escape.jsonl", "escape.jsonl"],
      ["updir/outside.txt", "updir"],
      ["inside-link.jsonl", "inside-link.jsonl"],
      ["inside-dir/ok.jsonl", "inside-dir"],
      ["zero", "zero"],
    ];
    for (const [given, link] of cases) {
      const error = await refusal(root.readText(given, "dataset_path", 1 << 20));
      expect(error.message).toBe(`dataset_path "${link}" is a symlink; symlinks inside test.root are refused`);
      expect(error.code).toBe("invalid");
    }
    expect((await refusal(root.openDirectory("updir", "path"))).message).toBe(
      'path "updir" is a symlink; symlinks inside test.root are refused',
    );
    expect((await refusal(root.list("inside-dir", "path"))).message).toContain("is a symlink");
  });

  it("refuses a FIFO and a directory where a file is read, without blocking", async () => {
    const fifo = await refusal(root.readText("fifo", "dataset_path", 1024));
    expect(fifo.message).toBe('dataset_path "fifo" is not a regular file (a directory, FIFO or device is refused)');
    expect((await refusal(root.readText("data", "dataset_path", 1024))).message).toContain("not a regular file");
    expect((await refusal(root.openDirectory("data/ok.jsonl", "path"))).message).toBe('path "data/ok.jsonl" is not a directory');
  });

  it("caps the size before reading", async () => {
    const error = await refusal(root.readText("big.jsonl", "dataset_path", 1024));
    expect(error.code).toBe("too_large");
    expect(error.message).toBe('dataset_path "big.jsonl" is larger than 1024 bytes, the most this server reads');
    expect(await root.readText("big.jsonl", "dataset_path", 2048)).toHaveLength(2048);
  });

  it("answers missing for a path that is not there, and for a root that is not", async () => {
    const error = await refusal(root.readText("data/none.jsonl", "dataset_path", 1024));
    expect(error.code).toBe("missing");
    expect(error.message).toBe('dataset_path "data/none.jsonl" does not exist under test.root');
    expect((await refusal(root.openDirectory("nope/deeper", "path"))).message).toBe('path "nope/deeper" does not exist under test.root');
    const absent = new PathRoot({ dir: path.join(base, "root", "absent"), key: "other.root" });
    expect((await refusal(absent.readText("x", "path", 1))).message).toBe("path: other.root does not exist on this server");
  });

  it("creates directories for writing inside the root, never through a symlink", async () => {
    const made = await root.directoryForWrite("runs/r1/checkpoints/step-1", "path");
    expect(made).toBe(path.join(await realpath(root.dir), "runs/r1/checkpoints/step-1"));
    const error = await refusal(root.directoryForWrite("updir/planted/step-1", "path"));
    expect(error.message).toBe('path "updir" is a symlink; symlinks inside test.root are refused');
    expect(existsSync(path.join(base, "planted"))).toBe(false);
    expect((await refusal(root.directoryForWrite("/tmp/x", "path"))).message).toContain("is absolute");
    expect((await refusal(root.directoryForWrite("../x", "path"))).message).toContain('contains ".."');
  });

  it("checks the files a directory is read through", async () => {
    mkdirSync(path.join(base, "root", "ckpt"), { recursive: true });
    rmSync(path.join(base, "root", "ckpt", "trainer_state.json"), { force: true });
    symlinkSync(path.join(base, "outside.txt"), path.join(base, "root", "ckpt", "trainer_state.json"));
    const dir = await root.existing("ckpt", "path", "directory");
    const error = await refusal(root.checkFiles(dir, ["trainer_state.json", "optimizer.safetensors"], "path"));
    expect(error.message).toBe('path "ckpt/trainer_state.json" is a symlink; symlinks inside test.root are refused');
  });

  it("never writes through a symlink planted where a file is written or appended to", async () => {
    mkdirSync(path.join(base, "root", "ck"), { recursive: true });
    rmSync(path.join(base, "root", "ck", "optimizer.safetensors"), { force: true });
    symlinkSync("../../outside.txt", path.join(base, "root", "ck", "optimizer.safetensors"));
    await root.withDirectory("ck", "path", {}, async (ck) => {
      const written = await refusal(ck.writeFile("optimizer.safetensors", "OVERWRITTEN"));
      expect(written.message).toBe('path "ck/optimizer.safetensors" is a symlink; symlinks inside test.root are refused');
      const appended = await refusal(ck.appendFile("optimizer.safetensors", "APPENDED"));
      expect(appended.message).toBe('path "ck/optimizer.safetensors" is a symlink; symlinks inside test.root are refused');
      // No temporary file is left beside it.
      expect(readdirSync(path.join(base, "root", "ck"))).toEqual(["optimizer.safetensors"]);
    });
  });

  it("never writes into a directory a symlink stands for", async () => {
    rmSync(path.join(base, "root", "ck2"), { recursive: true, force: true });
    mkdirSync(path.join(base, "root", "ck2"));
    symlinkSync(path.join(base, "outside-dir"), path.join(base, "root", "ck2", "adapter"));
    await root.withDirectory("ck2", "path", {}, async (ck2) => {
      const error = await refusal(ck2.writeFile("adapter/adapter_config.json", "{}"));
      expect(error.message).toBe('path "ck2/adapter" is a symlink; symlinks inside test.root are refused');
      await refusal(ck2.directory("adapter", { create: true }));
    });
  });

  it("refuses appending to a FIFO or to a file with another hard link", async () => {
    await root.withDirectory(".", "path", {}, async (top) => {
      expect((await refusal(top.appendFile("fifo", "x"))).message).toContain("is not a regular file");
    });
    mkdirSync(path.join(base, "root", "logs"), { recursive: true });
    const linked = path.join(base, "root", "logs", "linked.log");
    rmSync(linked, { force: true });
    linkSync(path.join(base, "root", "big.jsonl"), linked);
    try {
      const error = await refusal(root.withDirectory("logs", "path", {}, (logs) => logs.appendFile("linked.log", "x")));
      expect(error.message).toBe('path "logs/linked.log" has other hard links; a file written here must have none');
      expect(readFileSync(path.join(base, "root", "big.jsonl"), "utf8")).toBe("x".repeat(2048));
    } finally {
      rmSync(linked);
    }
  });

  it("writes, appends, lists and removes under the root", async () => {
    await root.withDirectory("work", "path", { create: true }, async (work) => {
      await work.writeFile("a/b/state.json", '{"v":1}');
      await work.writeFile("a/b/state.json", '{"v":2}');
      await work.appendFile("a/log.jsonl", "1\n");
      await work.appendFile("a/log.jsonl", "2\n");
      expect(await work.readText("a/b/state.json", 100)).toBe('{"v":2}');
      expect(await work.readText("a/log.jsonl", 100)).toBe("1\n2\n");
      symlinkSync(path.join(base, "outside-dir"), path.join(work.path, "a", "link"));
      const entries = await work.withDirectory("a", {}, (a) => a.entries());
      expect(entries.sort((x, y) => x.name.localeCompare(y.name))).toEqual([
        { name: "b", kind: "directory" },
        { name: "link", kind: "symlink" },
        { name: "log.jsonl", kind: "file" },
      ]);
      expect(await work.kind("a/link")).toBe("symlink");
      expect(await work.kind("a/none")).toBeUndefined();
      await work.remove("a");
      expect(await work.entries()).toEqual([]);
    });
    rmSync(path.join(base, "root", "work"), { recursive: true });
  });
});

describe("checkSafeName", () => {
  it("accepts run ids as the orchestrator makes them", () => {
    expect(checkSafeName("arith-20260101-120000-ab12", "run_id")).toBe("arith-20260101-120000-ab12");
    expect(checkSafeName("v1.2_x", "run_id")).toBe("v1.2_x");
  });

  it("refuses ., .., separators, absolute paths and overlong names", () => {
    for (const bad of [".", "..", "../x", "a/b", "a\\b", "/etc", ".hidden", "x".repeat(129), "a b", ""]) {
      expect(() => checkSafeName(bad, "run_id")).toThrow(PathError);
    }
    expect(() => checkSafeName("..", "run_id")).toThrow(
      'run_id ".." is not accepted: use 1-128 letters, digits, ".", "_" and "-", not starting with "."',
    );
  });
});
