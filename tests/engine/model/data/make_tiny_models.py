#!/usr/bin/env python3
"""Writes tiny random models (F32 GGUF) and llama.cpp's logits on them, for test_tiny_models.

The two real models cover `llama` with plain RoPE and `gemma3` with its default window. These
files cover what they do not, each against llama.cpp: `qwen2` (q/k/v biases, NEOX RoPE, GQA),
`llama` with Llama-3.1-style rope_freqs factors, linear RoPE scaling and grouped queries, and
`gemma3` with a 4-position sliding window on every other layer (sliding_window_pattern 2), its
own local RoPE base (rope.freq_base_swa) and final-logit soft-capping.

Reference: llama.cpp through PyPI llama-cpp-python==0.3.36 (n_ctx 256, logits_all, 2 threads,
default F16 KV cache, no flash attention). The weights come from numpy's PCG64 with fixed seeds;
the GGUF writer below follows the GGUF v3 layout (gguf.md in the ggml repository).

    ~/.cache/ember/venv-llamacpp/bin/python tests/engine/model/data/make_tiny_models.py
"""
import hashlib
import json
import os
import struct

import llama_cpp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = 64
PROMPT = [5, 17, 42, 9, 23, 7, 50, 33, 61, 12, 1, 2, 3, 44]

UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_value(kind, value):
    if kind == UINT32:
        return struct.pack("<I", value)
    if kind == INT32:
        return struct.pack("<i", value)
    if kind == FLOAT32:
        return struct.pack("<f", value)
    if kind == BOOL:
        return struct.pack("<?", value)
    if kind == STRING:
        return gguf_string(value)
    element, items = value
    return struct.pack("<IQ", element, len(items)) + b"".join(gguf_value(element, v) for v in items)


def write_gguf(path, metadata, tensors):
    """metadata: [(key, kind, value)], tensors: [(name, float32 array in ggml shape order)]."""
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata)))
    for key, kind, value in metadata:
        out += gguf_string(key) + struct.pack("<I", kind) + gguf_value(kind, value)
    offset, blobs = 0, []
    for name, array in tensors:
        shape = list(reversed(array.shape))  # ggml order: contiguous dimension first
        out += gguf_string(name) + struct.pack("<I", len(shape))
        out += b"".join(struct.pack("<Q", d) for d in shape) + struct.pack("<IQ", 0, offset)
        blob = array.astype("<f4").tobytes()
        blobs.append(blob)
        offset += (len(blob) + 31) // 32 * 32
    out += b"\0" * (-len(out) % 32)
    for blob in blobs:
        out += blob + b"\0" * (-len(blob) % 32)
    with open(path, "wb") as f:
        f.write(out)


def tokenizer_metadata():
    return [("tokenizer.ggml.model", STRING, "gpt2"), ("tokenizer.ggml.pre", STRING, "default"),
            ("tokenizer.ggml.tokens", ARRAY, (STRING, ["t%d" % i for i in range(VOCAB)])),
            ("tokenizer.ggml.token_type", ARRAY, (INT32, [1] * VOCAB)),
            ("tokenizer.ggml.merges", ARRAY, (STRING, ["t 1"])),
            ("tokenizer.ggml.bos_token_id", UINT32, 0), ("tokenizer.ggml.eos_token_id", UINT32, 1)]


def build(arch, seed, layers, embd, ff, heads, kv_heads, head_dim, extra_metadata, options):
    rng = np.random.default_rng(seed)

    def mat(rows, cols, scale=0.2):  # (rows, cols) = ggml [cols, rows]
        return (scale * rng.standard_normal((rows, cols))).astype(np.float32)

    def norm(n):
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    metadata = [("general.architecture", STRING, arch),
                (arch + ".block_count", UINT32, layers), (arch + ".context_length", UINT32, 256),
                (arch + ".embedding_length", UINT32, embd),
                (arch + ".feed_forward_length", UINT32, ff),
                (arch + ".attention.head_count", UINT32, heads),
                (arch + ".attention.head_count_kv", UINT32, kv_heads),
                (arch + ".attention.layer_norm_rms_epsilon", FLOAT32, 1e-6)]
    metadata += [(arch + "." + k, kind, v) for k, kind, v in extra_metadata] + tokenizer_metadata()
    tensors = [("token_embd.weight", mat(VOCAB, embd, 1.0)), ("output_norm.weight", norm(embd))]
    if "rope_freqs" in options:
        tensors.append(("rope_freqs.weight", np.array(options["rope_freqs"], dtype=np.float32)))
    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim
    for il in range(layers):
        p = "blk.%d." % il
        tensors += [(p + "attn_norm.weight", norm(embd)), (p + "attn_q.weight", mat(q_dim, embd)),
                    (p + "attn_k.weight", mat(kv_dim, embd)), (p + "attn_v.weight", mat(kv_dim, embd)),
                    (p + "attn_output.weight", mat(embd, q_dim)), (p + "ffn_norm.weight", norm(embd)),
                    (p + "ffn_gate.weight", mat(ff, embd)), (p + "ffn_up.weight", mat(ff, embd)),
                    (p + "ffn_down.weight", mat(embd, ff))]
        if options.get("biases"):
            tensors += [(p + "attn_q.bias", mat(1, q_dim, 0.5)[0]),
                        (p + "attn_k.bias", mat(1, kv_dim, 0.5)[0]),
                        (p + "attn_v.bias", mat(1, kv_dim, 0.5)[0])]
        if options.get("gemma"):
            tensors += [(p + "attn_q_norm.weight", norm(head_dim)),
                        (p + "attn_k_norm.weight", norm(head_dim)),
                        (p + "post_attention_norm.weight", norm(embd)),
                        (p + "post_ffw_norm.weight", norm(embd))]
    return metadata, tensors


MODELS = {
    "tiny-qwen2": dict(arch="qwen2", seed=1, layers=2, embd=32, ff=64, heads=4, kv_heads=2,
                       head_dim=8, extra_metadata=[("rope.freq_base", FLOAT32, 1000000.0)],
                       options={"biases": True}),
    "tiny-llama3": dict(arch="llama", seed=2, layers=2, embd=32, ff=64, heads=4, kv_heads=1,
                        head_dim=8,
                        extra_metadata=[("rope.freq_base", FLOAT32, 500000.0),
                                        ("rope.dimension_count", UINT32, 8),
                                        ("rope.scaling.type", STRING, "linear"),
                                        ("rope.scaling.factor", FLOAT32, 2.0)],
                        options={"rope_freqs": [1.0, 1.5, 4.0, 8.0]}),
    "tiny-gemma3": dict(arch="gemma3", seed=3, layers=4, embd=32, ff=64, heads=2, kv_heads=1,
                        head_dim=16,
                        extra_metadata=[("attention.key_length", UINT32, 16),
                                        ("attention.value_length", UINT32, 16),
                                        ("rope.freq_base", FLOAT32, 1000000.0),
                                        ("rope.freq_base_swa", FLOAT32, 100.0),
                                        ("attention.sliding_window", UINT32, 4),
                                        ("attention.sliding_window_pattern", UINT32, 2),
                                        ("final_logit_softcapping", FLOAT32, 30.0)],
                        options={"gemma": True}),
}


def main():
    golden = {"provenance": {
        "generator": "tests/engine/model/data/make_tiny_models.py",
        "reference": "llama.cpp via PyPI llama-cpp-python==%s (n_ctx 256, logits_all, 2 threads, "
                     "default F16 KV cache)" % llama_cpp.__version__},
        "prompt_ids": PROMPT, "models": {}}
    for name, spec in MODELS.items():
        path = os.path.join(HERE, name + ".gguf")
        write_gguf(path, *build(**spec))
        llm = llama_cpp.Llama(path, n_ctx=256, n_batch=256, logits_all=True, n_threads=2,
                              verbose=False)
        llm.reset()
        llm.eval(PROMPT)
        logits = np.array(llm.scores[: len(PROMPT)], dtype=np.float32)
        golden["models"][name] = {
            "model_file": name + ".gguf",
            "model_sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
            "logits": [[round(float(v), 5) for v in row] for row in logits]}
        del llm
    with open(os.path.join(HERE, "tiny-models.golden.json"), "w") as f:
        json.dump(golden, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", ", ".join(MODELS))


if __name__ == "__main__":
    main()
