"""Qwen2 / Qwen3 / Llama decoders in plain torch, loaded from Hugging Face directories."""
