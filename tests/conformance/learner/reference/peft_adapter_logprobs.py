"""Scores completions with Hugging Face PEFT: the expanded base loaded by transformers'
AutoModelForCausalLM, a learner's exported adapter (LoRA + trainable tokens) loaded on it by
PeftModel.from_pretrained, and each completion token's log-probability under the full softmax
(reasoning mask `free`: every id of the expanded vocabulary allowed everywhere). Neither learner's
code runs here: this is the reference an exported adapter is checked against.

    python peft_adapter_logprobs.py < request.json > logprobs.json
    request: {"base": DIR, "adapter": DIR, "sequences": [{"prompt": [ids], "completion": [ids]}]}
    answer:  {"logprobs": [[float per completion token]], "vocab_size": int, "adapter_keys": [str]}"""
import json
import sys

import torch
from peft import PeftModel, get_peft_model_state_dict
from transformers import AutoModelForCausalLM


def completion_logprobs(model, prompt: list[int], completion: list[int]) -> list[float]:
    ids = torch.tensor([prompt + completion])
    with torch.no_grad():
        # The logits at position t predict token t + 1: the completion's tokens are predicted from
        # the prompt's last position through the completion's second-to-last.
        logits = model(input_ids=ids).logits[0, len(prompt) - 1 : -1].double()
    return torch.log_softmax(logits, -1).gather(-1, torch.tensor(completion)[:, None])[:, 0].tolist()


def main() -> int:
    request = json.load(sys.stdin)
    base = AutoModelForCausalLM.from_pretrained(request["base"], dtype=torch.float32)
    model = PeftModel.from_pretrained(base, request["adapter"]).eval()
    answer = {
        "logprobs": [completion_logprobs(model, s["prompt"], s["completion"]) for s in request["sequences"]],
        "vocab_size": base.config.vocab_size,
        "adapter_keys": sorted(get_peft_model_state_dict(model)),
    }
    json.dump(answer, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
