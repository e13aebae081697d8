import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSafeName, PathError, PathRoot } from "./index.js";

let base: string;
let root: PathRoot;
const SECRET = "TOPSECRET-line-one\nsecond-line-of-secret\n";

beforeAll(() => {
  base = mkdtempSync(path.join(tmpdir(), "path-root-"));
  mkdirSync(path.join(base, "root", "data"), { recursive: true });
  writeFileSync(path.join(base, "root", "data", "ok.jsonl"), '{"a":1}\n');
  writeFileSync(path.join(base, "outside.txt"), SECRET);
  symlinkSync(path.join(base, "outside.txt"), path.join(base, "root", "escape.jsonl"));
  symlinkSync(path.join(base, "root", "data", "ok.jsonl"), path.join(base, "root", "inside-link.jsonl"));
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
  return error as PathError;
}

describe("PathRoot", () => {
  it("reads a regular file under the root, directly or through a symlink that stays inside", async () => {
    expect(await root.readText("data/ok.jsonl", "dataset_path", 1024)).toBe('{"a":1}\n');
    expect(await root.readText("inside-link.jsonl", "dataset_path", 1024)).toBe('{"a":1}\n');
    expect(await root.readText("./data/ok.jsonl", "dataset_path", 1024)).toBe('{"a":1}\n');
  });

  it("refuses absolute paths and .. segments by their text, naming the field", async () => {
    for (const given of ["/etc/passwd", "/proc/self/environ", path.join(base, "root", "data", "ok.jsonl")]) {
      const error = await refusal(root.readText(given, "dataset_path", 1024));
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

  it("refuses a symlink out of the root, and never shows what the file holds", async () => {
    for (const given of ["escape.jsonl", "updir/outside.txt"]) {
      const error = await refusal(root.readText(given, "dataset_path", 1 << 20));
      expect(error.message).toContain("leads out of test.root");
      expect(error.message).not.toContain("TOPSECRET");
      expect(error.message).not.toContain("second-line");
    }
  });

  it("refuses /dev/zero, a FIFO and a directory where a file is read, without blocking", async () => {
    expect((await refusal(root.readText("zero", "dataset_path", 1024))).message).toContain("leads out of");
    const fifo = await refusal(root.readText("fifo", "dataset_path", 1024));
    expect(fifo.message).toBe('dataset_path "fifo" is not a regular file (a directory, FIFO or device is refused)');
    expect((await refusal(root.readText("data", "dataset_path", 1024))).message).toContain("not a regular file");
  });

  it("caps the size before reading", async () => {
    const error = await refusal(root.readText("big.jsonl", "dataset_path", 1024));
    expect(error.code).toBe("too_large");
    expect(error.message).toBe('dataset_path "big.jsonl" is larger than 1024 bytes, the most this server reads');
    expect(await root.readText("big.jsonl", "dataset_path", 2048)).toHaveLength(2048);
  });

  it("answers missing for a path that is not there", async () => {
    const error = await refusal(root.readText("data/none.jsonl", "dataset_path", 1024));
    expect(error.code).toBe("missing");
    expect(error.message).toBe('dataset_path "data/none.jsonl" does not exist under test.root');
  });

  it("creates directories for writing inside the root, never through a symlink out of it", async () => {
    const made = await root.directoryForWrite("runs/r1/checkpoints/step-1", "path");
    expect(made).toBe(path.join(await import("node:fs/promises").then((fs) => fs.realpath(root.dir)), "runs/r1/checkpoints/step-1"));
    const error = await refusal(root.directoryForWrite("updir/planted/step-1", "path"));
    expect(error.message).toContain("leads out of test.root");
    expect(existsSync(path.join(base, "planted"))).toBe(false);
    expect((await refusal(root.directoryForWrite("/tmp/x", "path"))).message).toContain("is absolute");
    expect((await refusal(root.directoryForWrite("../x", "path"))).message).toContain('contains ".."');
  });

  it("checks the files a directory is read through", async () => {
    mkdirSync(path.join(base, "root", "ckpt"));
    symlinkSync(path.join(base, "outside.txt"), path.join(base, "root", "ckpt", "trainer_state.json"));
    const dir = await root.existing("ckpt", "path", "directory");
    const error = await refusal(root.checkFiles(dir, ["trainer_state.json", "optimizer.safetensors"], "path"));
    expect(error.message).toBe('path "ckpt/trainer_state.json" leads out of test.root (through a symlink)');
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
