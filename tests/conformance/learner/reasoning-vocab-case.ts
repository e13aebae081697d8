// The expanded-vocabulary case's model and sequences (arith-tiny, n_s = 147, one copy of every
// id, markers ":" / "\\boxed{"), shared by the conformance suite and the PEFT export check.
import path from "node:path";
import { REPO_ROOT } from "./conformance-fixtures.js";

export const MODEL = path.join(REPO_ROOT, "models/arith-tiny");
export const N_S = 147;
export const START = 27; // ":"
export const END = 114; // "\boxed{"
export const REASONING = { reasoning_vocab_size: N_S, reasoning_markers: [":", "\\boxed{"], reasoning_mask: "gated" };
// python3 -c "import hashlib; print(hashlib.sha256(('147:'+','.join(map(str,range(147)))).encode()).hexdigest())"
export const MAP_SHA256 = "7302e0b1acd3e1ad10eee69324957d9d671cae009f62b64a73aef6cdb9612dde";
export const TOKEN_ROWS_KEY = "base_model.model.model.embed_tokens.token_adapter.trainable_tokens_delta";

// "<|im_start|>user\nWhat is 27 + 45?<|im_end|>\n<|im_start|>assistant\n" in arith-tiny's ids.
export const PROMPT = [145, 117, 0, 101, 103, 1, 19, 24, 1, 12, 1, 21, 22, 32, 146, 0, 145, 125, 0];
// "27 + 45: 7+5=12, 2+4+1=7, \boxed{72}<|im_end|>" with the block's digits written as copies.
export const R = (id: number) => N_S + id;
export const STANDARD = [
  19,
  24,
  1,
  12,
  1,
  21,
  22,
  START,
  1,
  24,
  12,
  22,
  30,
  18,
  19,
  13,
  1,
  19,
  12,
  21,
  12,
  18,
  30,
  24,
  13,
  1,
  END,
  24,
  19,
  94,
  146,
];
export const MIXED = STANDARD.map((id, t) => (t > 7 && t < 26 && id !== 1 ? R(id) : id));
