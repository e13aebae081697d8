// The reasoning vocabulary's definition (docs/concepts/reasoning-vocabulary.md): settings and
// their errors, the map and its hash (checked against Python's hashlib), the map file, the
// markers on the shipped arith-tiny tokenizer, the mask's block states, and the mapped text.
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ModelTokenizer } from "../src/tokenizer/model-tokenizer.js";
import {
  blockStates,
  checkSameReasoningMap,
  decodeReasoningCompletion,
  defaultReasoningMap,
  isAllowed,
  maskLogitsRow,
  parseReasoningMap,
  REASONING_MAP_FILE,
  readReasoningMapFile,
  ReasoningTokenMap,
  ReasoningVocabError,
  resolveReasoningVocabulary,
  serializeReasoningMap,
  validateReasoningSettings,
  writeReasoningMapFile,
  type ReasoningVocabulary,
} from "../src/reasoning-vocab/index.js";

const ARITH = path.resolve(import.meta.dirname, "../../../models/arith-tiny");
const N_S = 147; // arith-tiny's config.json vocab_size

describe("settings", () => {
  it("refuses what can never work, naming the key", () => {
    const ok = { size: 4, markers: ["<think>", "</think>"] as const, mask: "gated" as const };
    expect(() => validateReasoningSettings(ok)).not.toThrow();
    expect(() => validateReasoningSettings({ ...ok, size: -1 })).toThrow(/model\.reasoning_vocab_size -1 must be an integer >= 0/);
    expect(() => validateReasoningSettings({ ...ok, mask: "open" as never })).toThrow(
      /model\.reasoning_mask "open" is not one of free, gated, strict/,
    );
    expect(() => validateReasoningSettings({ ...ok, markers: ["<think>", ""] })).toThrow(/model\.reasoning_markers\[1\] is empty/);
    expect(() => validateReasoningSettings({ ...ok, markers: ["x", "x"] })).toThrow(/model\.reasoning_markers: start and end are both "x"/);
    expect(() => validateReasoningSettings({ ...ok, size: 0 })).toThrow(/model\.reasoning_mask "gated" needs a reasoning vocabulary/);
    expect(() => validateReasoningSettings({ ...ok, size: 0, mask: "free" })).not.toThrow();
  });
});

describe("the map", () => {
  it("copies ids 0..n_r-1 by default and refuses n_r > n_s", () => {
    const map = defaultReasoningMap(N_S, 3);
    expect(Array.from(map.sourceIds)).toEqual([0, 1, 2]);
    expect(map.totalSize).toBe(150);
    expect(map.source(148)).toBe(1);
    expect(map.source(5)).toBe(5);
    expect(() => map.source(150)).toThrow(/beyond the expanded vocabulary/);
    expect(() => defaultReasoningMap(N_S, 148)).toThrow(
      /model\.reasoning_vocab_size 148 is larger than the model's standard vocabulary \(config\.json vocab_size 147\)/,
    );
  });

  it('hashes "n_s:id,id,..." with SHA-256 (values from Python\'s hashlib)', () => {
    // python3 -c "import hashlib; print(hashlib.sha256(b'147:0,1,2').hexdigest())"
    expect(defaultReasoningMap(N_S, 3).sha256).toBe("dfe443b4100539b294b2d76a9ad12894d10e553c01404dd845443cd29422ac96");
    // python3 -c "import hashlib; print(hashlib.sha256(('147:'+','.join(map(str,range(147)))).encode()).hexdigest())"
    expect(defaultReasoningMap(N_S, N_S).sha256).toBe("7302e0b1acd3e1ad10eee69324957d9d671cae009f62b64a73aef6cdb9612dde");
  });

  it("counts multiplicities of repeated sources and refuses non-standard sources", () => {
    const map = new ReasoningTokenMap(10, Int32Array.from([3, 3, 7, 3]));
    expect(Array.from(map.multiplicities)).toEqual([1, 2, 1, 3]);
    expect(map.copiesOf(3)).toBe(3);
    expect(map.copiesOf(4)).toBe(0);
    expect(() => new ReasoningTokenMap(10, Int32Array.from([10]))).toThrow(/source id 10 of reasoning id 10 is not a standard id/);
  });

  it("round-trips through reasoning_token_map.json, refusing a tampered hash and another map", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "reasoning-map-"));
    const map = new ReasoningTokenMap(N_S, Int32Array.from([5, 6, 5]));
    const markers = { start: "<think>", end: "</think>", startIds: [136], endIds: [143] };
    await writeReasoningMapFile(dir, map, markers);
    const read = await readReasoningMapFile(dir);
    expect(Array.from(read.map.sourceIds)).toEqual([5, 6, 5]);
    expect(read.map.sha256).toBe(map.sha256);
    expect(read.markers).toEqual(markers);
    const body = JSON.parse(await readFile(path.join(dir, REASONING_MAP_FILE), "utf8"));
    expect(body).toMatchObject({
      format: "lean-grpo.reasoning-token-map/1",
      standard_vocab_size: 147,
      reasoning_vocab_size: 3,
      multiplicities: [1, 1, 2],
    });
    expect(() => parseReasoningMap(JSON.stringify({ ...body, sha256: "00" }), "x")).toThrow(/"sha256" "00" is not the hash of its map/);
    const text = serializeReasoningMap(map);
    expect(() => checkSameReasoningMap(text, map, "adapter v3")).not.toThrow();
    expect(() => checkSameReasoningMap(text, defaultReasoningMap(N_S, 3), "adapter v3")).toThrow(
      /adapter v3 was saved with another reasoning map .* model\.reasoning_vocab_size \/ model\.reasoning_map must match/,
    );
    expect(() => checkSameReasoningMap(null, map, "checkpoint step-2")).toThrow(/checkpoint step-2 has no reasoning_token_map\.json/);
    expect(() => checkSameReasoningMap(text, undefined, "adapter v3")).toThrow(/set model\.reasoning_vocab_size to match/);
    expect(() => checkSameReasoningMap(null, undefined, "adapter v3")).not.toThrow();
  });
});

describe("on arith-tiny's tokenizer", () => {
  let tokenizer: ModelTokenizer;
  beforeAll(async () => {
    tokenizer = await ModelTokenizer.load(ARITH);
  });
  const resolve = (markers: [string, string], extra: Partial<{ size: number; mapFile: string }> = {}) =>
    resolveReasoningVocabulary(
      { size: extra.size ?? N_S, markers, mask: "gated", mapFile: extra.mapFile },
      { standardSize: N_S, tokenizer, stopIds: [146] },
    );

  it("encodes the markers into standard ids", async () => {
    const think = (await resolve(["<think>", "</think>"]))!;
    expect(think.markers.startIds).toEqual([136]);
    expect(think.markers.endIds).toEqual([143]);
    const arith = (await resolve([":", "\\boxed{"]))!;
    expect(arith.markers.startIds).toEqual([27]);
    expect(arith.markers.endIds).toEqual([114]);
    expect(arith.describe()).toMatchObject({
      n_s: 147,
      n_r: 147,
      mask: "gated",
      map_sha256: "7302e0b1acd3e1ad10eee69324957d9d671cae009f62b64a73aef6cdb9612dde",
    });
  });

  it("refuses markers that do not tokenize or end the sequence, naming the key", async () => {
    await expect(resolve(["<think>", "🙂"])).rejects.toThrow(/model\.reasoning_markers\[1\] "🙂" does not tokenize/);
    await expect(resolve(["<|im_end|>", "</think>"])).rejects.toThrow(
      /model\.reasoning_markers\[0\] "<\|im_end\|>" contains the end-of-sequence id 146/,
    );
    await expect(resolve(["<think>", "</think>"], { size: 148 })).rejects.toThrow(/model\.reasoning_vocab_size 148 is larger/);
    expect(await resolve(["<think>", "</think>"], { size: 0 }).catch((e) => e)).toBeInstanceOf(ReasoningVocabError); // gated without rows
  });

  it("takes a map file's sources, refusing one made for another model", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "reasoning-map-"));
    await writeReasoningMapFile(dir, new ReasoningTokenMap(N_S, Int32Array.from([27, 27, 17])));
    const vocab = (await resolve(["<think>", "</think>"], { size: 0, mapFile: dir }))!;
    expect(vocab.reasoningSize).toBe(3);
    expect(vocab.source(148)).toBe(27);
    await expect(resolve(["<think>", "</think>"], { size: 5, mapFile: dir })).rejects.toThrow(
      /model\.reasoning_vocab_size 5 differs from the 3 reasoning ids/,
    );
    const other = path.join(dir, "other.json");
    await writeFile(other, serializeReasoningMap(new ReasoningTokenMap(100, Int32Array.from([1]))));
    await expect(resolve(["<think>", "</think>"], { size: 0, mapFile: other })).rejects.toThrow(/is for a model with 100 standard ids/);
  });

  describe("block states and the mask", () => {
    let vocab: ReasoningVocabulary;
    beforeAll(async () => {
      vocab = (await resolve([":", "\\boxed{"]))!;
    });
    const ids = (text: string) => tokenizer.encode(text, { addSpecialTokens: false });
    const R = (id: number) => N_S + id; // the reasoning copy of a standard id

    it("opens after the start marker and closes at the end marker, on source ids, for good", () => {
      // "2 + 3: 5, \boxed{5}: 1" with the scratch work in reasoning ids and the end marker a copy.
      const completion = [...ids("2 + 3:"), R(22), R(13), R(1), R(114), ...ids("5}: 1")];
      const states = blockStates(completion, vocab);
      expect(states).toEqual([
        ...Array(ids("2 + 3:").length).fill("before"),
        "inside", // the token after ":" is sampled inside
        "inside",
        "inside",
        "inside", // the copy of "\boxed{" is still sampled inside; it closes the block
        ...Array(ids("5}: 1").length).fill("after"), // a second ":" opens nothing
      ]);
      const decoded = decodeReasoningCompletion(tokenizer, completion, vocab);
      expect(decoded.text).toBe("2 + 3:5, \\boxed{5}: 1");
      expect(decoded.trace).toEqual({ opened: true, closed: true, blockStart: 6, blockEnd: 9, reasoningInside: 3, reasoningOutside: 1 });
      // The reasoning tokens wrote "5, \boxed{" (code points 6..16).
      expect(decoded.spans).toEqual([{ start: 6, end: 16 }]);
      expect(decoded.reasoning.filter(Boolean)).toHaveLength(4);
    });

    it("allows the halves by mode and state", () => {
      for (const state of ["before", "inside", "after"] as const) {
        expect(isAllowed(R(3), state, "free", vocab)).toBe(true);
        expect(isAllowed(3, state, "free", vocab)).toBe(true);
        expect(isAllowed(R(3), state, "gated", vocab)).toBe(state === "inside");
        expect(isAllowed(3, state, "gated", vocab)).toBe(true);
        expect(isAllowed(R(3), state, "strict", vocab)).toBe(state === "inside");
        expect(isAllowed(3, state, "strict", vocab)).toBe(state !== "inside");
        expect(isAllowed(114, state, "strict", vocab)).toBe(true); // the end marker's id
      }
      const row = Float64Array.from({ length: vocab.totalSize }, (_, i) => i / 100);
      const strictInside = Float64Array.from(row);
      maskLogitsRow(strictInside, "inside", "strict", vocab);
      strictInside.forEach((v, id) => expect(Number.isFinite(v)).toBe(isAllowed(id, "inside", "strict", vocab)));
      expect(strictInside[114]).toBe(row[114]);
      const gatedBefore = Float64Array.from(row);
      maskLogitsRow(gatedBefore, "before", "gated", vocab);
      gatedBefore.forEach((v, id) => expect(Number.isFinite(v)).toBe(id < N_S));
    });

    it("decodes text a stock decoder would drop, marking the reasoning characters", () => {
      const completion = [...ids("What"), R(102), R(103), ...ids("?")];
      const decoded = decodeReasoningCompletion(tokenizer, completion, vocab);
      expect(decoded.text).toBe(tokenizer.decode([...ids("What"), 102, 103, ...ids("?")]));
      expect(decoded.text).toBe("What i is?");
      expect(decoded.spans).toEqual([{ start: 4, end: 9 }]);
      expect(decoded.trace.opened).toBe(false);
    });
  });
});
