#!/usr/bin/env python3
"""Writes tests/engine/cpu/data/dequant_reference.json: raw GGUF weight blocks of every type the
CPU backend supports, with the float values gguf-py's numpy dequantization gives for them, plus
float32 -> F16/BF16 conversions. test_cpu_dequantize.cpp compares our scalar code against it.

The reference is gguf-py (PyPI `gguf`, numpy implementation of ggml's block formats), not our
code. Blocks come from three sources:
  - real rows of the two real model files (the types they contain),
  - gguf.quants.quantize of random normal data (types gguf-py can quantize),
  - random bytes with finite F16 scales (every bit pattern of the quants; all types).

Usage (in a throwaway venv, not part of the build):
  /usr/bin/python3 -m venv /tmp/qv && /tmp/qv/bin/pip install gguf==0.19.0 numpy
  /tmp/qv/bin/python tests/tools/make_dequant_reference.py [--models DIR] [--out FILE]
"""
import argparse
import hashlib
import json
import os
from importlib.metadata import version

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q
from gguf.constants import GGML_QUANT_SIZES

SEED = 20240611
SMOLLM = "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA = "gemma-3-270m-q4_k_m.gguf"

# Real tensors to sample, per type: (file, tensor name).
REAL = {
    Q.F32: [(SMOLLM, "blk.0.attn_norm.weight"), (GEMMA, "blk.0.attn_q_norm.weight")],
    Q.Q4_1: [(SMOLLM, "blk.0.attn_q.weight"), (SMOLLM, "blk.29.ffn_down.weight")],
    Q.Q8_0: [(SMOLLM, "token_embd.weight"), (GEMMA, "blk.0.attn_v.weight")],
    Q.Q5_0: [(GEMMA, "blk.0.attn_q.weight")],
    Q.Q4_K: [(GEMMA, "blk.0.attn_output.weight")],
    Q.Q6_K: [(GEMMA, "blk.0.ffn_down.weight")],
}
TYPES = [Q.F32, Q.F16, Q.BF16, Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.Q4_K, Q.Q5_K, Q.Q6_K]
QUANTIZABLE = [Q.F16, Q.BF16, Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0]
# Byte offsets of the F16 scale fields in a block (kept finite in random blocks).
SCALE_FIELDS = {Q.Q4_0: [0], Q.Q4_1: [0, 2], Q.Q5_0: [0], Q.Q5_1: [0, 2], Q.Q8_0: [0],
                Q.Q4_K: [0, 2], Q.Q5_K: [0, 2], Q.Q6_K: [208]}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def floats_hex(values):
    return np.asarray(values, dtype="<f4").view("<u4").astype(">u4").tobytes().hex()


def case(qtype, raw, source):
    raw = np.frombuffer(bytes(raw), dtype=np.uint8)
    values = gguf.quants.dequantize(raw, qtype).astype(np.float32).reshape(-1)
    return {"type": qtype.name, "source": source, "elements": int(values.size),
            "blocks": raw.tobytes().hex(), "values": floats_hex(values)}


def element_bytes(qtype, elements):
    block, size = GGML_QUANT_SIZES[qtype]
    return elements // block * size


def real_cases(models, rng):
    out, provenance = [], {}
    readers = {}
    for qtype, picks in REAL.items():
        for file, name in picks:
            path = os.path.join(models, file)
            if file not in readers:
                readers[file] = gguf.GGUFReader(path)
                provenance[file] = sha256(path)
            tensor = next(t for t in readers[file].tensors if t.name == name)
            assert tensor.tensor_type == qtype, (name, tensor.tensor_type)
            cols = int(tensor.shape[0])
            rows = int(np.prod(tensor.shape[1:])) if len(tensor.shape) > 1 else 1
            row_bytes = element_bytes(qtype, cols)
            data = np.asarray(tensor.data).view(np.uint8).reshape(-1)
            block, size = GGML_QUANT_SIZES[qtype]
            # A slice of at most 512 elements from a first, last and random row.
            for row in sorted({0, rows - 1, int(rng.integers(rows))}):
                take = min(cols, 512 if block > 1 else 64)
                start = int(rng.integers(0, (cols - take) // max(block, 1) + 1)) * max(block, 1)
                begin = row * row_bytes + element_bytes(qtype, start)
                raw = data[begin:begin + element_bytes(qtype, take)]
                out.append(case(qtype, raw, f"{file}:{name} row {row} elements {start}.."
                                            f"{start + take - 1}"))
    return out, provenance


def quantized_cases(rng):
    out = []
    for qtype in QUANTIZABLE:
        for scale in (0.02, 3.0):
            x = (rng.standard_normal(128) * scale).astype(np.float32)
            x[5] = 0.0
            raw = gguf.quants.quantize(x, qtype).view(np.uint8).reshape(-1)
            out.append(case(qtype, raw, f"gguf.quants.quantize of 128 normal(0, {scale}) floats"))
    return out


def random_block_cases(rng):
    out = []
    for qtype in TYPES:
        block, size = GGML_QUANT_SIZES[qtype]
        if block == 1:  # float types: random finite values, including subnormals and zeros
            if qtype == Q.F32:
                x = np.concatenate([rng.standard_normal(48) * 10.0 ** rng.integers(-30, 30, 48),
                                    [0.0, -0.0, 1e-40, -3e-39]]).astype(np.float32)
                raw = x.view(np.uint8)
            else:
                bits = rng.integers(0, 1 << 16, 64, dtype=np.uint16)
                exponent = (bits >> 10) & 0x1F if qtype == Q.F16 else (bits >> 7) & 0xFF
                bits[exponent == (0x1F if qtype == Q.F16 else 0xFF)] &= 0x83FF if qtype == Q.F16 else 0x807F
                raw = bits.view(np.uint8)
            out.append(case(qtype, raw, "random finite values"))
            continue
        blocks = 2 if block == 256 else 4
        raw = rng.integers(0, 256, blocks * size, dtype=np.uint8)
        for b in range(blocks):
            for offset in SCALE_FIELDS[qtype]:
                scale = np.float16(rng.uniform(-0.05, 0.05) if offset else rng.uniform(1e-4, 0.1))
                raw[b * size + offset:b * size + offset + 2] = np.frombuffer(scale.tobytes(), np.uint8)
        out.append(case(qtype, raw, "random bytes with finite F16 scales"))
    return out


def conversions(rng):
    specials = np.array([0.0, -0.0, 1.0, -2.5, 65504.0, 65519.996, 65520.0, 1e6, 6.1035156e-05,
                         6.0975552e-05, 5.9604645e-08, 2.9802322e-08, 2.9802326e-08, 1e-9,
                         0.33333334, 1.0009766, 1.0004883, 1.0014648, float("inf"),
                         -float("inf")], dtype=np.float32)
    x = np.concatenate([specials, (rng.standard_normal(200) * 10.0 ** rng.integers(-9, 6, 200)),
                        rng.uniform(-1e-4, 1e-4, 40)]).astype(np.float32)
    f16 = x.astype(np.float16).view(np.uint16)
    bf16 = gguf.quants.quantize(x, Q.BF16).view(np.uint16).reshape(-1)
    return {"inputs": floats_hex(x), "f16_bits": [int(v) for v in f16],
            "bf16_bits": [int(v) for v in bf16]}


def activation_rows(rng):
    """Float rows and gguf-py's Q8_0 quantization of them: the reference for our activation
    quantizer (same scale; quants may differ by one where x * 127 / amax lies within rounding
    noise of a half, as gguf-py rounds half away from zero and multiplies by 1 / d)."""
    rows = []
    for scale in (1.0, 30.0, 1e-3):
        x = (rng.standard_normal(96) * scale).astype(np.float32)
        x[::17] *= 8
        x[40:48] = 0.0
        raw = gguf.quants.quantize(x, Q.Q8_0).view(np.uint8).reshape(-1)
        rows.append({"inputs": floats_hex(x), "q8_0": raw.tobytes().hex()})
    x = np.zeros(32, dtype=np.float32)  # an all-zero block
    rows.append({"inputs": floats_hex(x),
                 "q8_0": gguf.quants.quantize(x, Q.Q8_0).view(np.uint8).tobytes().hex()})
    return rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=os.path.expanduser("~/.cache/ember/models"))
    parser.add_argument("--out", default=os.path.join(here, "..", "engine", "cpu", "data",
                                                      "dequant_reference.json"))
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    real, models = real_cases(args.models, rng)
    document = {
        "provenance": {
            "generator": "tests/tools/make_dequant_reference.py",
            "reference": f"gguf-py {version('gguf')} gguf.quants.dequantize / quantize, "
                         f"numpy {np.__version__} float16 conversion",
            "seed": SEED,
            "models_sha256": models,
            "format": "blocks: raw GGUF block bytes (hex); values: expected float32 values as "
                      "big-endian IEEE bit patterns (8 hex digits each)",
        },
        "conversions": conversions(rng),
        "activations_q8_0": activation_rows(rng),
        "cases": real + quantized_cases(rng) + random_block_cases(rng),
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    print(f"wrote {len(document['cases'])} cases to {args.out}")


if __name__ == "__main__":
    main()
