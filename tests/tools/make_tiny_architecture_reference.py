#!/usr/bin/env python3
"""llama.cpp's logits on the tiny model of every architecture, for test_tiny_architectures.

For each architecture, `ember-cli synth-model --arch A --preset tiny` writes the tiny model (random
F32 weights from a fixed seed, the tokenizer of ggml-vocab-llama-spm.gguf); llama.cpp evaluates
several prompts on it with logits at every position, then continues each prompt greedily for 32
tokens. The test regenerates the same file (checked by its SHA-256) and compares Ember's logits.

A full vocabulary row is 32000 floats, so the file keeps, per position: llama.cpp's argmax over the
whole vocabulary with its logit and the runner-up's, the row's minimum and maximum, and the logits
of every 128th token id (250 ids, to 5 decimals): enough to check top-1 at every position and the
differences over a spread of the vocabulary, in about 120 KB per model.

Reference: llama.cpp through PyPI llama-cpp-python==0.3.36 (n_ctx 256 or as MODELS says, n_batch
256, logits_all, 2 threads, default F16 KV cache, no flash attention, YaRN parameters from the
file), built for AVX2 (scripts/setup-llamacpp-venv.sh's peer venv). The build matters: llama.cpp's
F32 products (tinyBLAS) sum in 8 lanes on AVX2 and in 16 on AVX-512, and Ember's F32 kernel sums
in 8 lanes as the AVX2 build does. Against an AVX-512 build Ember's logits differ by up to 1.5e-4
of the row's range (last-bit differences that grow where q, k and v are rounded to the fp16 KV
cache; summing Ember's F32 products in 16 lanes brings that under 1e-6); against the AVX2 build by
at most 6e-5.

    ~/.cache/ember/venv-llamacpp-peer/bin/python tests/tools/make_tiny_architecture_reference.py \
        build/bin/ember-cli $EMBER_TESTDATA/tokenizer/ggml-vocab-llama-spm.gguf [NAME...]

With NAMEs, only those models are recomputed and merged into the existing file.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import llama_cpp
import numpy as np

# (name in the golden file, architecture, preset, llama.cpp's n_ctx). llama.cpp takes LongRoPE's
# long factors when the context exceeds the original one (4096 in the tiny-longrope preset), so
# "phi3-longrope-long" runs with a context of 8192.
MODELS = [(a, a, "tiny", 256) for a in ["llama", "mistral3", "qwen2", "qwen3", "qwen3moe", "gpt-oss",
                                        "gemma2", "gemma3", "granite", "olmo2", "phi3", "smollm3"]]
MODELS += [("llama-yarn", "llama", "tiny-yarn", 256), ("phi3-longrope", "phi3", "tiny-longrope", 256),
           ("phi3-longrope-long", "phi3", "tiny-longrope", 8192),
           ("granite-ffn-bias", "granite", "tiny-ffn-bias", 256),
           ("gpt-oss-mxfp4", "gpt-oss", "tiny-mxfp4", 256)]
PROMPTS = ["The quick brown fox jumps over the lazy dog.",
           "Hello, world! 12345 + 678 = ?",
           "Once upon a time, in a land far away, there lived a small dragon who loved books."]
SEED = 7
SAMPLE_STRIDE = 128
GREEDY_TOKENS = 32
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine", "model", "data",
                   "tiny-architectures.golden.json")


def row_summary(row):
    order = np.argsort(-row, kind="stable")
    return {"top": int(order[0]), "top_logit": round(float(row[order[0]]), 6),
            "second_logit": round(float(row[order[1]]), 6),
            "min": round(float(row.min()), 6), "max": round(float(row.max()), 6),
            "sampled": [round(float(v), 5) for v in row[::SAMPLE_STRIDE]]}


def reference(model_path, prompts_ids, n_ctx):
    # The YaRN values -1 mean "from the model file", as llama.cpp's own tools do (the binding's
    # defaults would override the file's beta_fast/beta_slow with 32/1).
    llm = llama_cpp.Llama(model_path, n_ctx=n_ctx, n_batch=256, logits_all=True, n_threads=2,
                          yarn_beta_fast=-1.0, yarn_beta_slow=-1.0, yarn_attn_factor=-1.0,
                          verbose=False)
    out = []
    for ids in prompts_ids:
        llm.reset()
        llm.eval(ids)
        rows = np.array(llm.scores[: len(ids)], dtype=np.float32)
        greedy = []
        for _ in range(GREEDY_TOKENS):
            last = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
            token = int(np.argmax(last))
            greedy.append(token)
            llm.eval([token])
        out.append({"ids": ids, "positions": [row_summary(r) for r in rows], "greedy": greedy})
    del llm
    return out


def main():
    cli, vocab, only = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    golden = {"provenance": {
        "generator": "tests/tools/make_tiny_architecture_reference.py",
        "reference": "llama.cpp via PyPI llama-cpp-python==%s built for AVX2 (n_ctx 256 "
                     "unless a model says, logits_all, 2 threads, default F16 KV cache, no flash "
                     "attention, YaRN parameters from the file)"
                     % llama_cpp.__version__,
        "vocabulary": os.path.basename(vocab)},
        "seed": SEED, "sample_stride": SAMPLE_STRIDE, "prompts": PROMPTS, "models": {}}
    if only:
        with open(OUT) as f:
            golden["models"] = json.load(f)["models"]
    tokenizer = llama_cpp.Llama(vocab, vocab_only=True, verbose=False)
    prompts_ids = [tokenizer.tokenize(p.encode(), add_bos=True) for p in PROMPTS]
    del tokenizer
    with tempfile.TemporaryDirectory() as tmp:
        for name, arch, preset, n_ctx in MODELS:
            if only and name not in only:
                continue
            path = os.path.join(tmp, name + ".gguf")
            subprocess.run([cli, "synth-model", "--arch", arch, "--preset", preset, "--out", path,
                            "--vocab", vocab, "--seed", str(SEED)], check=True)
            golden["models"][name] = {
                "architecture": arch, "preset": preset, "n_ctx": n_ctx,
                "model_sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
                "prompts": reference(path, prompts_ids, n_ctx)}
            print("done", name, flush=True)
    with open(OUT, "w") as f:
        json.dump(golden, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
