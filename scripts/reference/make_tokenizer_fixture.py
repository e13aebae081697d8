"""Writes a tiny Qwen-style tokenizer and the ids and chat prompts it must produce.

    /usr/bin/python3 scripts/reference/make_tokenizer_fixture.py [OUT_DIR]

(Debian 12: apt-get install python3-regex python3-jinja2.) OUT_DIR defaults to
packages/lm/test/fixtures/tokenizer. The real Qwen tokenizer.json is 11 MB;
this one has the same structure (NFC normalizer, Qwen2's split regex, byte-level
BPE, ChatML added tokens) with 300 merges learned here from a small corpus, so
the learner's tokenizer can be checked offline. The expected ids come from an
independent byte-level BPE written below, and the expected chat prompts from
Python's jinja2 configured as transformers' apply_chat_template configures it.
"""

import json
import os
import sys
import unicodedata
from collections import Counter

import jinja2
import jinja2.ext
import jinja2.sandbox
import regex

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "packages", "lm", "test", "fixtures", "tokenizer")

# Qwen2/Qwen3's pre-tokenizer pattern (tokenizer.json, pre_tokenizer.pretokenizers[0]).
SPLIT = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]
MERGES = 300

CORPUS = """theorem add_comm (a b : Nat) : a + b = b + a := by
  induction a with
  | zero => simp
  | succ n ih => omega
The user asks a question and the assistant answers it. Let's think step by step.
We prove that the sum of two even numbers is even. It's true, isn't it?
lemma mul_pos (x y : ℝ) (hx : 0 < x) (hy : 0 < y) : 0 < x * y := by positivity
Calculate 12 + 34 = 46 and 7 * 8 = 56; then the answer is \\boxed{102}.
"""

CHAT_TEMPLATE = r"""{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0].role == 'system' %}
        {{- messages[0].content + '\n\n' }}
    {%- endif %}
    {{- "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0].role == 'system' %}
        {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}
{%- for message in messages[::-1] %}
    {%- set index = (messages|length - 1) - loop.index0 %}
    {%- if ns.multi_step_tool and message.role == "user" and message.content is string and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}
        {%- set ns.multi_step_tool = false %}
        {%- set ns.last_query_index = index %}
    {%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- if message.content is string %}
        {%- set content = message.content %}
    {%- else %}
        {%- set content = '' %}
    {%- endif %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {%- set reasoning_content = '' %}
        {%- if message.reasoning_content is string %}
            {%- set reasoning_content = message.reasoning_content %}
        {%- else %}
            {%- if '</think>' in content %}
                {%- set reasoning_content = content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') %}
                {%- set content = content.split('</think>')[-1].lstrip('\n') %}
            {%- endif %}
        {%- endif %}
        {%- if loop.index0 > ns.last_query_index %}
            {%- if loop.last or (not loop.last and reasoning_content) %}
                {{- '<|im_start|>' + message.role + '\n<think>\n' + reasoning_content.strip('\n') + '\n</think>\n\n' + content.lstrip('\n') }}
            {%- else %}
                {{- '<|im_start|>' + message.role + '\n' + content }}
            {%- endif %}
        {%- else %}
            {{- '<|im_start|>' + message.role + '\n' + content }}
        {%- endif %}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and content) or (not loop.first) %}
                    {{- '\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\n{"name": "' }}
                {{- tool_call.name }}
                {{- '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\n\n</think>\n\n' }}
    {%- endif %}
{%- endif %}"""

TEXTS = [
    "theorem add_comm (a b : Nat) : a + b = b + a := by omega",
    "Hello, world! It's 2025 and we're proving things.",
    "  leading spaces,\ttabs\nand\r\nnewlines\n\n\n   trailing   ",
    "Unicode: café, naïve, ℝ, ∀ x ∈ S, 数学, and 🙂 emoji.",
    "<|im_start|>user\nProve 1 + 1 = 2.<|im_end|>\n<|im_start|>assistant\n<think>\nEasy.\n</think>\n\nBy norm_num.",
    "e\u0301 decomposed becomes é after NFC",
    "12345678901234567890",
    "",
]

CONVERSATIONS = [
    {"messages": [{"role": "user", "content": "Prove that 2 + 2 = 4."}], "add_generation_prompt": True},
    {
        "messages": [{"role": "system", "content": "You are a Lean 4 expert."}, {"role": "user", "content": "theorem t : 1 + 1 = 2 := by"}],
        "add_generation_prompt": True,
        "enable_thinking": False,
    },
    {
        "messages": [
            {"role": "user", "content": "What is 3 * 4?"},
            {"role": "assistant", "content": "<think>\n3 * 4 = 12\n</think>\n\nThe answer is 12."},
            {"role": "user", "content": "And 5 * 6?"},
        ],
        "add_generation_prompt": True,
    },
    {
        "messages": [
            {"role": "system", "content": "Use tools when needed."},
            {"role": "user", "content": "Check this proof."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"type": "function", "function": {"name": "lean_check", "arguments": {"code": "example : 1 = 1 := rfl", "timeout": 30}}}],
            },
            {"role": "tool", "content": '{"ok": true}'},
            {"role": "assistant", "content": "The proof checks."},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "lean_check",
                    "description": "Check Lean 4 code",
                    "parameters": {"type": "object", "properties": {"code": {"type": "string"}}},
                },
            }
        ],
        "add_generation_prompt": False,
    },
]


def bytes_to_unicode():
    """GPT-2's reversible map from bytes to printable characters (byte-level BPE)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    n = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + n)
            n += 1
    return dict(zip(printable, map(chr, chars)))


BYTE_CHARS = bytes_to_unicode()


def pretokenize(text):
    return ["".join(BYTE_CHARS[b] for b in piece.encode("utf-8")) for piece in regex.findall(SPLIT, text)]


def train_merges(corpus, count):
    words = Counter(tuple(w) for w in pretokenize(unicodedata.normalize("NFC", corpus)))
    merges = []
    for _ in range(count):
        pairs = Counter()
        for word, freq in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += freq
        if not pairs:
            break
        # Most frequent pair; ties broken by the pair itself so the result is deterministic.
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        merges.append(best)
        merged = {}
        for word, freq in words.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + freq
        words = merged
    return merges


def bpe(word, ranks):
    parts = list(word)
    while len(parts) > 1:
        candidates = [(ranks.get((a, b)), i) for i, (a, b) in enumerate(zip(parts, parts[1:])) if (a, b) in ranks]
        if not candidates:
            break
        _, i = min(candidates)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts


def encode(text, vocab, ranks):
    """Special tokens are matched first (unnormalised); the rest is NFC-normalised, split, byte-mapped, merged."""
    ids = []
    pattern = "(" + "|".join(regex.escape(s) for s in SPECIAL) + ")"
    for segment in regex.split(pattern, text):
        if segment in SPECIAL:
            ids.append(vocab[segment])
        elif segment:
            for word in pretokenize(unicodedata.normalize("NFC", segment)):
                ids.extend(vocab[p] for p in bpe(word, ranks))
    return ids


def render(conversation, special_tokens):
    # transformers' apply_chat_template environment (utils/chat_template_utils.py).
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = lambda x, indent=None, separators=None, sort_keys=False: json.dumps(
        x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys
    )
    return env.from_string(CHAT_TEMPLATE).render(**conversation, **special_tokens)


def main():
    os.makedirs(OUT, exist_ok=True)
    merges = train_merges(CORPUS, MERGES)
    vocab = {BYTE_CHARS[b]: b for b in range(256)}
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    added = []
    for token in SPECIAL:
        vocab[token] = len(vocab)
        added.append(
            {
                "id": vocab[token],
                "content": token,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": token.startswith("<|"),
            }
        )
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [{"type": "Split", "pattern": {"Regex": SPLIT}, "behavior": "Isolated", "invert": False}, byte_level],
        },
        "post_processor": byte_level,
        "decoder": byte_level,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": "",
            "end_of_word_suffix": "",
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": {k: v for k, v in vocab.items() if k not in SPECIAL},
            "merges": [f"{a} {b}" for a, b in merges],
        },
    }
    config = {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": {str(t["id"]): {k: v for k, v in t.items() if k != "id"} for t in added},
        "bos_token": None,
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 40960,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }
    with open(os.path.join(OUT, "tokenizer.json"), "w") as f:
        json.dump(tokenizer, f, ensure_ascii=False)
    with open(os.path.join(OUT, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, ensure_ascii=False, indent=2)

    ranks = {pair: i for i, pair in enumerate(merges)}
    special_tokens = {"bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "unk_token": None}
    expected = {
        "vocab_size": len(vocab),
        "texts": [{"text": t, "ids": encode(t, vocab, ranks)} for t in TEXTS],
        "conversations": [],
    }
    for conversation in CONVERSATIONS:
        prompt = render(conversation, special_tokens)
        expected["conversations"].append({**conversation, "prompt": prompt, "ids": encode(prompt, vocab, ranks)})
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
