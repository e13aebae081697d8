"""torchrun for Debian's torch 1.13 on Python 3.11: its Std.from_str returns None for "0" under
3.11's enum (so every launch fails in to_map); None is read as Std.NONE, then torchrun runs as is."""
import sys

import torch.distributed.elastic.multiprocessing as multiprocessing
import torch.distributed.elastic.multiprocessing.api as api
from torch.distributed.run import main

_to_map = api.to_map


def to_map(val_or_map, local_world_size):
    return _to_map(api.Std.NONE if val_or_map is None else val_or_map, local_world_size)


api.to_map = multiprocessing.to_map = to_map

if __name__ == "__main__":
    sys.exit(main())
