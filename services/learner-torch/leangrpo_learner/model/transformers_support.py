"""Whether the transformers model source can run here, asked without importing the packages
(importing transformers takes seconds; the config check runs at every start)."""
from __future__ import annotations

import importlib.util

# Values of torch.attn_implementation, as transformers names them (flash_attention_2 needs the
# flash-attn package; transformers says so when it is missing).
ATTN_IMPLEMENTATIONS = ("sdpa", "flash_attention_2", "eager")


def transformers_missing() -> str | None:
    """None when transformers and peft are importable, else a sentence saying which are not."""
    missing = [name for name in ("transformers", "peft") if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    names = " and ".join(missing)
    return f"the Python package{'s' if len(missing) > 1 else ''} {names} {'are' if len(missing) > 1 else 'is'} not installed (pip install transformers peft)"
