// Sending and receiving an adapter through both envelopes, and every way a received
// stream can be wrong. Digests are computed here with node:crypto, not by the module.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { LoadAdapterRequestSchema, type LoadAdapterRequest } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import type { ExportAdapterResponse } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { rm } from "node:fs/promises";
import { PathRoot } from "@lean-grpo/kit";
import {
  adapterMessages,
  AdapterTransferError,
  exportAdapterEnvelope,
  loadAdapterEnvelope,
  readAdapterDir,
  receiveAdapter,
  type AdapterDirectory,
  type AdapterFile,
  type AdapterPart,
} from "../src/index.js";

const sha = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");
const config = { path: "adapter_config.json", data: Buffer.from(JSON.stringify({ r: 8, lora_alpha: 16, peft_type: "LORA" })) };
const weights = { path: "adapter_model.safetensors", data: Buffer.from(Array.from({ length: 2500 }, (_, i) => (i * 31) % 251)) };
const files: AdapterFile[] = [config, weights];

const roots: string[] = [];
afterEach(async () => {
  await Promise.all(roots.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A scratch root; the adapter goes to <root>/adapter so that escapes would land in <root>. */
function scratch(): { root: string; dir: string } {
  const root = mkdtempSync(path.join(tmpdir(), "adapter-files-"));
  roots.push(root);
  return { root, dir: path.join(root, "adapter") };
}

/** `dir` made afresh under its parent, as a service makes one under its root (kit/paths). */
async function fresh(dir: string): Promise<AdapterDirectory> {
  return new PathRoot({ dir: path.dirname(dir), key: "adapters.dir" }).withDirectory(".", "name", { create: true }, (root) =>
    root.freshDirectory(path.basename(dir)),
  );
}

/** The files of `dir`, read through its parent opened as a root. */
async function readBack(dir: string): Promise<AdapterFile[]> {
  return new PathRoot({ dir: path.dirname(dir), key: "adapters.dir" }).withDirectory(path.basename(dir), "name", {}, readAdapterDir);
}

async function* streamOf<T>(messages: Iterable<T>): AsyncIterable<T> {
  yield* messages;
}

async function receive(messages: Iterable<LoadAdapterRequest>, dir: string): Promise<AdapterPart[]> {
  const parts: AdapterPart[] = [];
  for await (const part of receiveAdapter(loadAdapterEnvelope, streamOf(messages), () => fresh(dir))) parts.push(part);
  return parts;
}

/** The stream for `files` at 1000-byte chunks, as mutable messages. */
function loadMessages(sent: AdapterFile[] = files): LoadAdapterRequest[] {
  return [...adapterMessages(loadAdapterEnvelope, { version: 3 }, sent, 1000)];
}

const chunkRequest = (value: { path: string; offset: bigint; data: Uint8Array; eof: boolean }) =>
  create(LoadAdapterRequestSchema, { part: { case: "chunk", value } });
const sourceRequest = (fileInfos: Array<{ path: string; size: bigint; sha256: string }>) =>
  create(LoadAdapterRequestSchema, { part: { case: "source", value: { name: "policy-v3", version: 3n, files: fileInfos } } });

/** Expects the stream to fail with `message` and `problem`, leaving nothing on disk. */
async function expectRefused(messages: Iterable<LoadAdapterRequest>, message: RegExp | string, problem = "invalid") {
  const { root, dir } = scratch();
  const error = await receive(messages, dir).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AdapterTransferError);
  expect((error as AdapterTransferError).message).toMatch(message);
  expect((error as AdapterTransferError).problem).toBe(problem);
  expect(readdirSync(root)).toEqual([]);
}

describe("sending", () => {
  it("announces each file's size and SHA-256, then sends it in chunks with offsets and one eof", () => {
    const messages = [...adapterMessages(exportAdapterEnvelope, { version: 7, baseModel: "qwen2-tiny" }, files, 1000)];
    const manifest = messages[0]!.part;
    expect(manifest.case).toBe("manifest");
    expect(manifest.value).toMatchObject({
      name: "policy-v7",
      version: 7n,
      baseModel: "qwen2-tiny",
      files: [
        { path: config.path, size: BigInt(config.data.length), sha256: sha(config.data) },
        { path: weights.path, size: 2500n, sha256: sha(weights.data) },
      ],
    });
    const chunks = messages.slice(1).map((m) => m.part.value as { path: string; offset: bigint; data: Uint8Array; eof: boolean });
    expect(chunks.map((c) => [c.path, c.offset, c.data.length, c.eof])).toEqual([
      [config.path, 0n, config.data.length, true],
      [weights.path, 0n, 1000, false],
      [weights.path, 1000n, 1000, false],
      [weights.path, 2000n, 500, true],
    ]);
  });

  it("sends an empty file as one empty eof chunk, and a file of exactly one chunk as one chunk", () => {
    const messages = [
      ...adapterMessages(
        loadAdapterEnvelope,
        { version: 1 },
        [
          { path: "empty", data: new Uint8Array() },
          { path: "k", data: new Uint8Array(1000) },
        ],
        1000,
      ),
    ];
    expect(messages[0]!.part.value).toMatchObject({
      name: "policy-v1",
      version: 1n,
      path: "",
      files: [
        { path: "empty", size: 0n, sha256: sha(new Uint8Array()) },
        { path: "k", size: 1000n },
      ],
    });
    expect(
      messages
        .slice(1)
        .map((m) => m.part.value as { path: string; offset: bigint; data: Uint8Array; eof: boolean })
        .map((c) => [c.path, c.offset, c.data.length, c.eof]),
    ).toEqual([
      ["empty", 0n, 0, true],
      ["k", 0n, 1000, true],
    ]);
  });

  it("refuses a path that would leave the adapter directory and a chunk size below 1", () => {
    expect(() => [...adapterMessages(loadAdapterEnvelope, { version: 1 }, [{ path: "../x", data: new Uint8Array(1) }])]).toThrow(
      /"\.\.\/x" must be relative and stay inside/,
    );
    expect(() => [...adapterMessages(loadAdapterEnvelope, { version: 1 }, files, 0)]).toThrow(/chunk size 0 is not a positive integer/);
  });
});

describe("round trip", () => {
  it("receives the learner's export into a directory, byte for byte, yielding each part to relay", async () => {
    const { dir } = scratch();
    const sent = [...files, { path: "nested/notes.txt", data: Buffer.from("why") }, { path: "empty.bin", data: new Uint8Array() }];
    const parts: AdapterPart[] = [];
    const messages = adapterMessages(exportAdapterEnvelope, { version: 12, baseModel: "m" }, sent, 1000);
    for await (const part of receiveAdapter<ExportAdapterResponse>(exportAdapterEnvelope, streamOf(messages), (header) =>
      fresh(path.join(dir, header.name)),
    ))
      parts.push(part);
    expect(parts[0]).toMatchObject({ case: "header", value: { name: "policy-v12", version: 12 } });
    expect(parts.slice(1).every((p) => p.case === "chunk")).toBe(true);
    for (const file of sent) expect(readFileSync(path.join(dir, "policy-v12", file.path)).equals(Buffer.from(file.data))).toBe(true);
  });

  it("sends a received directory on, read back from disk", async () => {
    const first = scratch();
    await receive(loadMessages(), first.dir);
    const second = scratch();
    const read = await readBack(first.dir);
    expect(read.map((f) => f.path)).toEqual([config.path, weights.path]);
    await receive(adapterMessages(loadAdapterEnvelope, { version: 3 }, read, 700), second.dir);
    expect(readFileSync(path.join(second.dir, weights.path)).equals(weights.data)).toBe(true);
    expect(readFileSync(path.join(second.dir, config.path)).equals(config.data)).toBe(true);
  });

  it("replaces whatever the directory held before", async () => {
    const { dir } = scratch();
    await receive(loadMessages([{ path: "stale", data: Buffer.from("old") }]), dir);
    await receive(loadMessages(), dir);
    expect(readdirSync(dir).sort()).toEqual([config.path, weights.path]);
  });

  it("never writes through a symlink planted where the directory or one of its files goes", async () => {
    const { root, dir } = scratch();
    const outside = mkdtempSync(path.join(tmpdir(), "adapter-outside-"));
    roots.push(outside);
    writeFileSync(path.join(outside, config.path), "VICTIM");
    // The adapter directory itself a link out: the link is removed, a real directory made.
    symlinkSync(outside, dir);
    await receive(loadMessages(), dir);
    expect(readFileSync(path.join(outside, config.path), "utf8")).toBe("VICTIM");
    expect(readdirSync(outside)).toEqual([config.path]);
    expect(readFileSync(path.join(dir, config.path)).equals(config.data)).toBe(true);
    // A file of it a link out, planted before the next transfer: gone with the old directory.
    await rm(path.join(dir, weights.path));
    symlinkSync(path.join(outside, config.path), path.join(dir, weights.path));
    await receive(loadMessages(), dir);
    expect(readFileSync(path.join(outside, config.path), "utf8")).toBe("VICTIM");
    expect(readFileSync(path.join(dir, weights.path)).equals(weights.data)).toBe(true);
    // Reading one back lists a symlink as no file of the adapter.
    mkdirSync(path.join(root, "read"));
    symlinkSync(path.join(outside, config.path), path.join(root, "read", config.path));
    expect(await readBack(path.join(root, "read"))).toEqual([]);
  });
});

describe("a damaged stream is refused, naming the file and what was expected", () => {
  it("corrupted bytes: the digest does not match", async () => {
    const messages = loadMessages();
    (messages[3]!.part.value as { data: Uint8Array }).data = new Uint8Array(1000);
    await expectRefused(
      messages,
      new RegExp(`"adapter_model.safetensors": sha256 [0-9a-f]{64} does not match the announced ${sha(weights.data)}`),
      "corrupt",
    );
  });

  it("a file shorter than announced", async () => {
    const messages = loadMessages().slice(0, 4);
    (messages[3]!.part.value as { eof: boolean }).eof = true;
    await expectRefused(messages, '"adapter_model.safetensors": 2000 bytes received, 2500 announced');
  });

  it("a file longer than announced", async () => {
    const messages = loadMessages();
    messages.push(chunkRequest({ path: weights.path, offset: 2500n, data: new Uint8Array(1), eof: true }));
    (messages[4]!.part.value as { eof: boolean }).eof = false;
    await expectRefused(messages, '"adapter_model.safetensors" is longer than its announced 2500 bytes (a chunk ends at 2501)');
  });

  for (const outside of ["../outside", "a/../../outside", "..\\outside", "/etc/passwd", "C:\\outside", "", "."]) {
    it(`a header path that leaves the directory: ${JSON.stringify(outside)}`, async () => {
      await expectRefused(
        [sourceRequest([{ path: outside, size: 1n, sha256: sha(new Uint8Array(1)) }])],
        `file path "${outside}" must be relative and stay inside the adapter directory`,
      );
    });
  }

  it("a chunk path that leaves the directory", async () => {
    const messages = loadMessages();
    (messages[1]!.part.value as { path: string }).path = "../adapter_config.json";
    await expectRefused(messages, 'file path "../adapter_config.json" must be relative and stay inside the adapter directory');
  });

  it("a stream that ends without the last file's eof", async () => {
    await expectRefused(
      loadMessages().slice(0, 4),
      'the stream ended inside "adapter_model.safetensors" (2000 of 2500 bytes, no eof chunk)',
    );
  });

  it("an announced file that never comes", async () => {
    await expectRefused(loadMessages().slice(0, 2), 'files announced but not sent: "adapter_model.safetensors"');
  });

  it("a chunk for a file the header does not list", async () => {
    const messages = loadMessages();
    messages.push(chunkRequest({ path: "other.bin", offset: 0n, data: new Uint8Array(1), eof: true }));
    await expectRefused(
      messages,
      'chunk for "other.bin", which the header does not list (listed: "adapter_config.json", "adapter_model.safetensors")',
    );
  });

  it("a chunk out of order", async () => {
    const messages = loadMessages();
    [messages[3], messages[4]] = [messages[4]!, messages[3]!];
    await expectRefused(messages, '"adapter_model.safetensors": chunk at offset 2000, expected offset 1000');
  });

  it("a file that starts before the previous one ended", async () => {
    const messages = loadMessages();
    const [configChunk] = messages.splice(1, 1);
    messages.splice(2, 0, configChunk!);
    await expectRefused(messages, '"adapter_config.json" started before "adapter_model.safetensors" ended (eof)');
  });

  it("a file sent twice", async () => {
    const messages = loadMessages();
    messages.push(messages[1]!);
    await expectRefused(messages, 'chunk for "adapter_config.json", which was already complete (eof)');
  });

  it("chunks before the header, a second header, an empty stream", async () => {
    const messages = loadMessages();
    await expectRefused(messages.slice(1), "the first message must be `source`, not `chunk`");
    await expectRefused([...messages, messages[0]!], "after `source`, every message must be a `chunk`");
    await expectRefused([], "the stream ended before its `source`");
    await expectRefused([create(LoadAdapterRequestSchema, {})], "a message with neither `source` nor `chunk` set");
  });

  it("a header that lists no files, a file twice, or no SHA-256", async () => {
    await expectRefused([sourceRequest([])], "the header lists no files");
    const info = { path: "a", size: 1n, sha256: sha(new Uint8Array(1)) };
    await expectRefused([sourceRequest([info, { ...info, path: "./a" }])], '"./a" is listed twice in the header');
    await expectRefused([sourceRequest([{ ...info, sha256: "" }])], '"a": sha256 "" is not 64 hex digits');
  });

  it("a header beyond the limits", async () => {
    const infos = Array.from({ length: 65 }, (_, i) => ({ path: `f${i}`, size: 1n, sha256: sha(new Uint8Array(1)) }));
    await expectRefused([sourceRequest(infos)], "the header lists 65 files; an adapter may have at most 64", "too-large");
    await expectRefused(
      [sourceRequest([{ path: "huge", size: 17n << 30n, sha256: sha(new Uint8Array(1)) }])],
      "the header announces 18253611008 bytes; an adapter may have at most 17179869184",
      "too-large",
    );
  });

  it("a version the contract can carry but a number cannot", async () => {
    const header = create(LoadAdapterRequestSchema, { part: { case: "source", value: { name: "x", version: 1n << 60n, files: [] } } });
    await expectRefused([header], /^source\.version: adapter version 1152921504606846976 is out of range/);
  });

  it("a receiver that stops reading early leaves no directory behind", async () => {
    const { dir } = scratch();
    for await (const part of receiveAdapter(loadAdapterEnvelope, streamOf(loadMessages()), () => fresh(dir))) {
      if (part.case === "chunk") break;
    }
    expect(existsSync(dir)).toBe(false);
  });
});
