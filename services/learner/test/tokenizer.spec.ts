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
import { fixturePath } from "./support/fixtures.js";

interface Expected {
  vocab_size: number;
  texts: Array<{ text: string; ids: number[] }>;
  conversations: Array<{ messages: ChatMessage[]; tools?: unknown[]; add_generation_prompt: boolean; enable_thinking?: boolean; prompt: string; ids: number[] }>;
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

      const raising = await variant((d) => writeFile(path.join(d, "chat_template.jinja"), "{{ raise_exception('roles must alternate') }}"));
      const strict = await ModelTokenizer.load(raising);
      expect(() => strict.applyChatTemplate([{ role: "user", content: "hi" }])).toThrow(/the chat template failed to render: .*roles must alternate/);
    });
  });
});
