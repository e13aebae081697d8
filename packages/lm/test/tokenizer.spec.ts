// The tokenizer and chat template against expectations from an independent Python
// byte-level BPE and Python's jinja2 (scripts/reference/make_tokenizer_fixture.py), on a
// tiny tokenizer with Qwen's structure (NFC, Qwen2 split regex, byte-level BPE, ChatML).
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenizerError } from "../src/errors.js";
import type { ChatMessage } from "../src/tokenizer/chat-template.js";
import { ModelTokenizer } from "../src/tokenizer/model-tokenizer.js";
import { writeCharTokenizer } from "./support/char-tokenizer.js";
import { fixturePath } from "./support/fixtures.js";

interface Expected {
  vocab_size: number;
  texts: Array<{ text: string; ids: number[] }>;
  conversations: Array<{
    messages: ChatMessage[];
    tools?: unknown[];
    add_generation_prompt: boolean;
    enable_thinking?: boolean;
    prompt: string;
    ids: number[];
  }>;
}

describe("ModelTokenizer", () => {
  let tokenizer: ModelTokenizer;
  let expected: Expected;
  beforeAll(async () => {
    tokenizer = await ModelTokenizer.load(fixturePath("tokenizer"));
    expected = JSON.parse(await readFile(fixturePath("tokenizer", "expected.json"), "utf8")) as Expected;
  });

  it("encodes every test text to the reference ids, and decodes them back (NFC-normalised)", () => {
    for (const { text, ids } of expected.texts) {
      expect(tokenizer.encode(text), JSON.stringify(text)).toEqual(ids);
      expect(tokenizer.decode(ids)).toBe(text.normalize("NFC"));
    }
  });

  it("knows its special tokens and size", () => {
    expect(tokenizer.vocabularySize).toBe(expected.vocab_size);
    expect(tokenizer.eosTokenId).toBe(tokenizer.tokenId("<|im_end|>"));
    expect(tokenizer.padTokenId).toBe(tokenizer.tokenId("<|endoftext|>"));
    expect(tokenizer.specialTokens.bos_token).toBeNull();
    const ids = tokenizer.encode("<|im_start|>hi<|im_end|>");
    expect(tokenizer.decode(ids, { skipSpecialTokens: true })).toBe("hi");
  });

  it("renders each conversation exactly as Python's jinja2 does, and encodes it to the reference ids", () => {
    for (const conversation of expected.conversations) {
      const options = {
        addGenerationPrompt: conversation.add_generation_prompt,
        tools: conversation.tools,
        variables: conversation.enable_thinking === undefined ? {} : { enable_thinking: conversation.enable_thinking },
      };
      expect(tokenizer.applyChatTemplate(conversation.messages, options)).toBe(conversation.prompt);
      expect(tokenizer.encodeChat(conversation.messages, options)).toEqual(conversation.ids);
    }
  });

  describe("text holding a character the vocabulary has no token for", () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), "char-tokenizer-"));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));
    const load = async (name: string, options: Parameters<typeof writeCharTokenizer>[1]) =>
      ModelTokenizer.load(await writeCharTokenizer(path.join(dir, name), options));
    const lean = "theorem foo (n : ℕ) : n = n";

    it("gives the model's unk_token for it, as Hugging Face tokenizers do", async () => {
      const tokenizer = await load("unk", { unkToken: "<unk>" });
      const unk = tokenizer.tokenId("<unk>")!;
      expect(unk).toBeDefined();
      const ids = tokenizer.encode(lean);
      expect(ids).toEqual([...tokenizer.encode("theorem foo (n : "), unk, ...tokenizer.encode(") : n = n")]);
      expect(ids.filter((id) => id === unk)).toHaveLength(1);
      // One unk per unknown character; fused into one when the model says fuse_unk.
      expect(tokenizer.encode("∀ℕ").filter((id) => id === unk)).toHaveLength(2);
      const fused = await load("fused", { unkToken: "<unk>", fuseUnk: true });
      expect(fused.encode("∀ℕ")).toEqual([fused.tokenId("<unk>")]);
      // WordLevel (which the library reads through tokenizer_config.json): tokenizer.json's unk_token still counts.
      const wordLevel = await load("word-level-unk", { type: "WordLevel", unkToken: " " });
      expect(wordLevel.encode("(ℕ)")).toEqual(["(", " ", ")"].map((t) => wordLevel.tokenId(t)));
    });

    it("gives the bytes' tokens with BPE byte_fallback", async () => {
      const tokenizer = await load("bytes", { fallbackBytes: [0xe2, 0x84, 0x95] }); // ℕ is E2 84 95 in UTF-8
      expect(tokenizer.encode("(ℕ)")).toEqual(["(", "<0xE2>", "<0x84>", "<0x95>", ")"].map((t) => tokenizer.tokenId(t)));
    });

    it("refuses the text naming the character, its code point and where it is, when the model has no unk_token", async () => {
      const tokenizer = await load("no-unk", {});
      const plain = "theorem foo (n : N) : n = n";
      expect(tokenizer.decode(tokenizer.encode(plain))).toBe(plain);
      expect(tokenizer.encode(plain).length).toBeLessThan(plain.length); // "the" and "or" merged
      const refusal = (() => {
        try {
          tokenizer.encode(lean);
        } catch (error) {
          return error as Error;
        }
        return undefined;
      })();
      expect(refusal).toBeInstanceOf(TokenizerError);
      expect(refusal?.message).toContain('cannot encode "ℕ" (U+2115) at index 17 of the text');
      expect(refusal?.message).toContain("(n : ℕ) : n = n");
      expect(refusal?.message).toContain(`the vocabulary of the tokenizer in ${path.join(dir, "no-unk")} has no token for it`);
      expect(refusal?.message).toContain("neither an unk_token nor byte_fallback");
      // Positions count code points, special tokens written in the text included; the first unknown one is named.
      expect(() => tokenizer.encode("<|im_start|>user\n1 😀 ∀")).toThrow(/cannot encode "😀" \(U\+1F600\) at index 19 of the text/);
      expect(() => tokenizer.encode("∀", { addSpecialTokens: false })).toThrow(/"∀" \(U\+2200\) at index 0/);
      // A chat prompt is refused the same way; the index is in the templated prompt.
      expect(() => tokenizer.encodeChat([{ role: "user", content: "Prove ∀ n, n = n" }], { addGenerationPrompt: true })).toThrow(
        /cannot encode "∀" \(U\+2200\) at index 23 of the text/,
      );
      // Byte fallback without the byte's token, and no unk_token: refused as well.
      const partial = await load("partial-bytes", { fallbackBytes: [0xe2, 0x84] });
      expect(() => partial.encode(lean)).toThrow(/cannot encode "ℕ" \(U\+2115\)/);
      // WordLevel without unk_token: the library gives no id at all; refused the same way.
      const wordLevel = await load("word-level", { type: "WordLevel" });
      expect(wordLevel.decode(wordLevel.encode("(n)"))).toBe("(n)");
      expect(() => wordLevel.encode(lean)).toThrow(/cannot encode "ℕ" \(U\+2115\) at index 17 .*neither an unk_token nor byte_fallback/);
    });

    it("refuses the text when the model's unk_token is not in the vocabulary", async () => {
      const tokenizer = await load("unk-missing", { unkToken: "<unk>", unkInVocab: false });
      expect(() => tokenizer.encode(lean)).toThrow(TokenizerError);
      expect(() => tokenizer.encode(lean)).toThrow(
        /cannot encode "ℕ" \(U\+2115\) at index 17 .*unk_token "<unk>" \(tokenizer\.json model\.unk_token\) is not in the vocabulary/,
      );
    });
  });

  describe("tokenizer files it cannot use", () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), "tokenizer-"));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    async function variant(edit: (d: string) => Promise<void>): Promise<string> {
      const target = await mkdtemp(path.join(dir, "t-"));
      await cp(fixturePath("tokenizer"), target, { recursive: true });
      await edit(target);
      return target;
    }

    it("a missing tokenizer.json", async () => {
      await expect(ModelTokenizer.load(dir)).rejects.toThrow(/cannot read .*tokenizer\.json: ENOENT/);
    });

    it("a config that is not JSON", async () => {
      const target = await variant((d) => writeFile(path.join(d, "tokenizer_config.json"), "{"));
      await expect(ModelTokenizer.load(target)).rejects.toThrow(TokenizerError);
      await expect(ModelTokenizer.load(target)).rejects.toThrow(/tokenizer_config\.json is not a valid JSON object/);
    });

    it("a template that does not parse", async () => {
      const target = await variant(async (d) => {
        const config = JSON.parse(await readFile(path.join(d, "tokenizer_config.json"), "utf8"));
        await writeFile(path.join(d, "tokenizer_config.json"), JSON.stringify({ ...config, chat_template: "{% for m in messages %}" }));
      });
      await expect(ModelTokenizer.load(target)).rejects.toThrow(/the chat template does not parse/);
    });

    it("a model without a chat template, and a template that raises", async () => {
      const none = await variant(async (d) => {
        const config = JSON.parse(await readFile(path.join(d, "tokenizer_config.json"), "utf8"));
        delete config.chat_template;
        await writeFile(path.join(d, "tokenizer_config.json"), JSON.stringify(config));
      });
      const plain = await ModelTokenizer.load(none);
      expect(plain.hasChatTemplate).toBe(false);
      expect(() => plain.applyChatTemplate([{ role: "user", content: "hi" }])).toThrow(/has no chat template/);

      // A processor's chat_template.json, where newer transformers keep it: the same template, rendered alike.
      const original = await ModelTokenizer.load(fixturePath("tokenizer"));
      const fromJson = await variant(async (d) => {
        const config = JSON.parse(await readFile(path.join(d, "tokenizer_config.json"), "utf8"));
        await writeFile(path.join(d, "chat_template.json"), JSON.stringify({ chat_template: config.chat_template }));
        delete config.chat_template;
        await writeFile(path.join(d, "tokenizer_config.json"), JSON.stringify(config));
      });
      const conversation = [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hi" },
      ];
      expect((await ModelTokenizer.load(fromJson)).applyChatTemplate(conversation, { addGenerationPrompt: true })).toBe(
        original.applyChatTemplate(conversation, { addGenerationPrompt: true }),
      );
      const badJson = await variant((d) => writeFile(path.join(d, "chat_template.json"), JSON.stringify({ template: "x" })));
      await expect(ModelTokenizer.load(badJson)).rejects.toThrow(/chat_template\.json must be \{"chat_template": "<the template>"\}/);

      const raising = await variant((d) => writeFile(path.join(d, "chat_template.jinja"), "{{ raise_exception('roles must alternate') }}"));
      const strict = await ModelTokenizer.load(raising);
      expect(() => strict.applyChatTemplate([{ role: "user", content: "hi" }])).toThrow(
        /the chat template failed to render: .*roles must alternate/,
      );
    });
  });
});
