"""Prints what TensorBoard's own reader finds in an event directory, as JSON: scalars by tag, text by tag.

Usage: python read_tfevents.py LOGDIR. Needs the tensorboard package.
"""

import json
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator


def main(logdir: str) -> None:
    acc = EventAccumulator(logdir, size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    scalars = {tag: [[e.step, e.value] for e in acc.Scalars(tag)] for tag in tags["scalars"]}
    texts = {}
    for tag in tags["tensors"]:
        texts[tag] = [[e.step, b"".join(e.tensor_proto.string_val).decode("utf-8")] for e in acc.Tensors(tag)]
    print(json.dumps({"scalars": scalars, "texts": texts}))


if __name__ == "__main__":
    main(sys.argv[1])
