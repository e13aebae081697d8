"""Writes packages/lm/test/fixtures/f16-rounding.json: float32 values and their IEEE binary16
bits, rounded to nearest even by Python's struct 'e' format (the standard library, sharing
nothing with the TypeScript conversion). struct refuses values past the largest half; those
round to infinity under IEEE 754 (and torch's .to(torch.float16)), written here as such.

    python3 scripts/reference/make_f16_fixture.py
"""

import json
import os
import random
import struct


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def half_bits(x):
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:
        return 0xFC00 if x < 0 else 0x7C00


rng = random.Random(0)
values = [0.0, -0.0, 1.0, -2.5, 65504.0, 65519.99, 65520.0, -70000.0, 1e-8, -3e-8, 6e-8, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 2.0**-14, 1 - 2.0**-12]
# Ties between two halves (the bit below the kept mantissa set, nothing after): nearest even decides.
values += [1 + 2.0**-11, 1 + 3 * 2.0**-11, 1024 + 0.5, 1024 + 1.5, 2.0**-15 + 2.0**-25]
values += [rng.gauss(0, 1) for _ in range(64)] + [rng.gauss(0, 1e-5) for _ in range(32)] + [rng.uniform(-7e4, 7e4) for _ in range(16)]
cases = [[f32_bits(v), half_bits(f32(v))] for v in values]
out = os.path.join(os.path.dirname(__file__), "..", "..", "packages", "lm", "test", "fixtures", "f16-rounding.json")
with open(out, "w") as f:
    json.dump({"source": "scripts/reference/make_f16_fixture.py: struct 'e' (round half to even)", "cases": cases}, f)
    f.write("\n")
