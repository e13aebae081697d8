"""torch.model_source "transformers": any Hugging Face causal LM through AutoModelForCausalLM, with
LoRA injected by peft, behind the same interface as the native CausalLM (hidden_states, head,
lora_layout, config.vocab_size / max_position_embeddings), so the Learner, the losses, the PEFT
export and the checkpoints are the same code for both sources.

The trainable weights stay in the Learner's LoraAdapter (PEFT key names, float32); they are bound
into peft's lora_A / lora_B modules by parameter, so AdamW, export and checkpoints see one set of
tensors whichever source computes the forward pass. A pass without an adapter (the reference
policy) runs under peft's disable_adapter().

Only LoRA dropout is random: every other dropout of the model is set to 0 at load, because RL
logprobs must be those of the policy the sampler drew from.

transformers and peft are imported here only; the native path never needs them.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from ..errors import AdapterError, ModelError
from ..lora.lora_adapter import LoraAdapter
from ..lora.lora_config import LoraConfig, validated_lora_config
from ..lora.lora_layout import LoraLayout
from .causal_lm import ForwardOptions
from .reasoning_expansion import embedding_for, expand_hf

try:
    from torch.func import functional_call as _functional_call
except ImportError:  # torch < 2.0
    from torch.nn.utils.stateless import functional_call as _functional_call

ADAPTER_NAME = "default"  # peft's; get_peft_model_state_dict drops it from the saved key names
# Logit post-processing this wrapper does not implement (it projects hidden states itself).
UNSUPPORTED_LOGIT_KEYS = ("logit_scale", "logits_scaling")


@dataclass(frozen=True)
class ModelLimits:
    """What the Learner checks requests against (the native source's ModelConfig has the same names)."""

    vocab_size: int
    max_position_embeddings: int


def peft_lora_config(config: LoraConfig):
    import peft

    return peft.LoraConfig(
        r=config.rank,
        lora_alpha=config.alpha,
        target_modules=list(config.target_modules),
        lora_dropout=config.dropout,
        use_rslora=config.use_rslora,
        bias="none",
        task_type="CAUSAL_LM",
    )


def _text_config(hf_config):
    return hf_config.get_text_config() if hasattr(hf_config, "get_text_config") else hf_config


def _zero_dropout(model: nn.Module) -> None:
    """Every dropout of the base model to 0 (done before peft adds its LoRA dropouts)."""
    for module in model.modules():
        if isinstance(module, nn.Dropout):
            module.p = 0.0
        # HF attention modules keep their rate as a float and apply it only when training.
        if isinstance(getattr(module, "attention_dropout", None), float):
            module.attention_dropout = 0.0


class TransformersCausalLM:
    def __init__(self, hf_model, lora: LoraConfig, device: torch.device, name: str = "", gradient_checkpointing: bool = False, vocabulary=None):
        """`vocabulary`: a reasoning vocabulary the model was expanded to (reasoning_expansion.expand_hf), or None."""
        import peft
        from peft.tuners.lora import LoraLayer

        self.device = device
        self.name = name
        text_config = _text_config(hf_model.config)
        for key in UNSUPPORTED_LOGIT_KEYS:
            if getattr(text_config, key, None) not in (None, 1, 1.0):
                raise ModelError(
                    f'config.json "{key}" is {getattr(text_config, key)!r}; scaled logits are not supported by this learner (accepted: unset or 1)'
                )
        self.logit_softcap = getattr(text_config, "final_logit_softcapping", None)
        hf_model.requires_grad_(False)
        hf_model.config.use_cache = False
        _zero_dropout(hf_model)
        if gradient_checkpointing:
            # Non-reentrant: works with a frozen base and inputs that need no grad (peft's LoRA params do).
            hf_model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        self.lora_config = validated_lora_config(lora, accepted_modules=None)
        try:
            self.peft_model = peft.get_peft_model(hf_model, peft_lora_config(self.lora_config), adapter_name=ADAPTER_NAME)
        except ValueError as error:  # peft: "Target modules {...} not found in the base model"
            raise ModelError(f"lora.target_modules {list(self.lora_config.target_modules)} do not fit {type(hf_model).__name__}: {error}") from None
        self.hf_model = self.peft_model.get_base_model()
        self.hf_model.eval()
        self.decoder = self.hf_model.get_decoder()
        self.head = self.hf_model.get_output_embeddings().weight
        self.base_dtype = self.head.dtype
        self.config = ModelLimits(
            vocab_size=int(self.head.shape[0]),
            max_position_embeddings=int(getattr(text_config, "max_position_embeddings", None) or 1 << 31),
        )
        # module path in the base model (e.g. "model.layers.0.self_attn.q_proj") -> its LoRA layer
        self.lora_modules: dict[str, LoraLayer] = {
            path: module for path, module in self.hf_model.named_modules() if isinstance(module, LoraLayer) and ADAPTER_NAME in module.lora_A
        }
        self.layout: LoraLayout = {path: (m.in_features, m.out_features) for path, m in self.lora_modules.items()}
        self.weights = {name: p for name, p in self.hf_model.named_parameters() if ".lora_" not in name}
        self._bound: LoraAdapter | None = None
        self.reasoning_vocabulary = vocabulary
        self.reasoning_start = vocabulary.standard_size if vocabulary is not None else None
        self.untied_head = self.head is not self.hf_model.get_input_embeddings().weight

    @staticmethod
    def load(
        directory: str | Path,
        lora: LoraConfig,
        device: torch.device,
        dtype: torch.dtype,
        attn_implementation: str = "sdpa",
        gradient_checkpointing: bool = False,
        expand=None,
    ) -> "TransformersCausalLM":
        """`expand`: n_s -> the reasoning vocabulary to expand to (None: no expansion)."""
        from transformers import AutoModelForCausalLM

        try:
            hf_model = AutoModelForCausalLM.from_pretrained(str(directory), dtype=dtype, attn_implementation=attn_implementation)
        except (ImportError, ValueError) as error:
            text = str(error).lower()
            if attn_implementation != "sdpa" and ("flash" in text or "attention" in text or "attn" in text):
                raise ModelError(f'torch.attn_implementation "{attn_implementation}" cannot be used here: {error}; accepted: sdpa, eager') from None
            raise ModelError(f"transformers could not load {directory}: {error}") from None
        except OSError as error:
            raise ModelError(f"transformers could not load {directory}: {error}") from None
        vocabulary = None
        if expand is not None:
            # n_s is the config's vocab_size (the embedding's rows; an expanded base's map), never the tokenizer's size.
            vocabulary = expand(int(hf_model.get_input_embeddings().weight.shape[0]))
            if vocabulary is not None:
                expand_hf(hf_model, vocabulary.map)
        return TransformersCausalLM(hf_model.to(device), lora, device, str(directory), gradient_checkpointing, vocabulary)

    def input_embedding_matrix(self) -> torch.Tensor:
        return self.hf_model.get_input_embeddings().weight

    def parameter_count(self) -> int:
        return sum({id(t): t.numel() for t in self.weights.values()}.values())

    def lora_layout(self, config: LoraConfig) -> LoraLayout:
        """The PEFT model's layout; its LoRA shape is fixed when the model is wrapped, so an adapter
        (a checkpoint's) with other settings is refused, naming them."""
        config = validated_lora_config(config, accepted_modules=None)
        mine = self.lora_config
        if (config.rank, config.alpha, set(config.target_modules), config.use_rslora) != (mine.rank, mine.alpha, set(mine.target_modules), mine.use_rslora):
            raise AdapterError(
                f"the adapter has r={config.rank}, alpha={config.alpha:g}, target_modules={list(config.target_modules)}, use_rslora={config.use_rslora}; "
                f"the transformers source wrapped the model with r={mine.rank}, alpha={mine.alpha:g}, target_modules={list(mine.target_modules)}, "
                f"use_rslora={mine.use_rslora} (set the learner's lora section to the adapter's and restart)"
            )
        return self.layout

    def bind(self, adapter: LoraAdapter) -> None:
        """Makes peft's LoRA layers compute with the adapter's parameters (the same tensors, no copy)."""
        if self._bound is adapter:
            return
        for path, module in self.lora_modules.items():
            pair = adapter.pair_at(path)
            if pair is None:
                raise AdapterError(f"the adapter has no LoRA pair for {path!r}, which the PEFT model targets")
            module.lora_A[ADAPTER_NAME].weight, module.lora_B[ADAPTER_NAME].weight = pair
            # peft puts an Identity where its config's dropout is 0; a checkpoint's adapter may differ.
            module.lora_dropout[ADAPTER_NAME] = nn.Dropout(adapter.config.dropout) if adapter.config.dropout > 0 else nn.Identity()
        self._bound = adapter

    def _set_lora_dropout(self, active: bool) -> None:
        for module in self.lora_modules.values():
            module.lora_dropout[ADAPTER_NAME].train(active)

    def hidden_states(self, ids: torch.Tensor, mask: torch.Tensor, options: ForwardOptions) -> torch.Tensor:
        """Final-norm hidden states of left-padded ids, as the native model returns them."""
        # Positions count real tokens only, as the sampler saw them (left padding must not shift them).
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        # HF checkpoints decoder layers only in training mode; every dropout but LoRA's is 0.
        self.hf_model.train(options.gradient_checkpointing and torch.is_grad_enabled())
        dropout = options.adapter is not None and options.dropout_seed is not None and options.adapter.config.dropout > 0
        self._set_lora_dropout(dropout)
        with contextlib.ExitStack() as stack:
            if options.adapter is None:
                stack.enter_context(self.peft_model.disable_adapter())
            else:
                self.bind(options.adapter)
            if dropout:
                # Masks are a function of the step's dropout seed; checkpoint recomputation restores the RNG state.
                stack.enter_context(torch.random.fork_rng(devices=[self.device] if self.device.type == "cuda" else []))
                torch.manual_seed(options.dropout_seed)
            rows = options.adapter.rows() if options.adapter is not None else None
            if rows is None:
                out = self.decoder(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False)
            else:
                # The adapter's trained reasoning rows in place of the base's copies, through the
                # embedding module's own forward (a scaled embedding such as Gemma 3's keeps its scale).
                module = self.hf_model.get_input_embeddings()
                table = embedding_for(module.weight, options.adapter)
                embeds = _functional_call(module, {"weight": table}, (ids,))
                out = self.decoder(inputs_embeds=embeds, attention_mask=mask, position_ids=positions, use_cache=False)
        # The modes stay as set: a checkpointed layer recomputed in backward must see the same dropout.
        return out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0]
