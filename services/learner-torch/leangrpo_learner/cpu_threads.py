"""CPU thread settings (reference/torch-learner.md): on 2 cores, 1 torch intra-op thread with
OpenBLAS doing the matmuls on its own threads beats 2 torch threads, which oversubscribe."""
from __future__ import annotations

import ctypes
import ctypes.util

import torch


def set_blas_threads(count: int) -> bool:
    """openblas_set_num_threads(count) on the loaded OpenBLAS, if any; False when there is none."""
    for name in ("openblas", "openblas64_", "blas"):
        path = ctypes.util.find_library(name)
        if not path:
            continue
        try:
            library = ctypes.CDLL(path)
            library.openblas_set_num_threads(int(count))
            return True
        except (OSError, AttributeError):
            continue
    return False


def configure_cpu_threads(threads: int, blas_threads: int) -> None:
    torch.set_num_threads(threads)
    if blas_threads > 0:
        set_blas_threads(blas_threads)
