#!/usr/bin/env python3
"""Records llama.cpp's logits past Gemma 3's sliding window, for test_fidelity_llamacpp.

The golden files of tests/data/golden/ (scripts/make-golden.py) hold prompts shorter than
Gemma 3's 512-position sliding window, so they cannot tell whether the local layers see the
right positions. This records one raw prompt of about 960 tokens (make-golden.py's long text,
twice) with the same reference and settings: llama.cpp through PyPI llama-cpp-python==0.3.36,
F16 KV cache, no flash attention, n_ctx 2048, n_batch 2048, 2 threads. It keeps llama.cpp's
top-20 logits from position 400 on (both sides of position 512) and 32 greedy tokens.

    ~/.cache/ember/venv-llamacpp/bin/python tests/engine/model/data/make_swa_golden.py
"""
import hashlib
import importlib.util
import json
import os

import llama_cpp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
MODELS_DIR = os.environ.get("EMBER_MODELS_DIR", os.path.expanduser("~/.cache/ember/models"))
MODEL = "gemma-3-270m-q4_k_m.gguf"
FIRST_POSITION = 400
TOP_K = 20
GREEDY_TOKENS = 32


def long_text():
    spec = importlib.util.spec_from_file_location("make_golden", os.path.join(ROOT, "scripts", "make-golden.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LONG_TEXT


def main():
    path = os.path.join(MODELS_DIR, MODEL)
    llm = llama_cpp.Llama(path, n_ctx=2048, n_batch=2048, logits_all=True, n_threads=2, seed=0,
                          verbose=False)
    text = long_text()
    ids = llm.tokenize((text + "\n\n" + text).encode(), add_bos=True, special=False)
    llm.reset()
    llm.eval(ids)
    scores = np.array(llm.scores[: len(ids)], dtype=np.float32)
    top = []
    for row in scores[FIRST_POSITION:]:
        idx = np.argsort(-row, kind="stable")[:TOP_K]
        top.append([[int(i), round(float(row[i]), 5)] for i in idx])
    greedy = []
    last = scores[-1]
    for _ in range(GREEDY_TOKENS):
        tok = int(np.argmax(last))
        greedy.append(tok)
        llm.eval([tok])
        last = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
    sha = hashlib.sha256(open(path, "rb").read()).hexdigest()
    doc = {
        "provenance": {
            "generator": "tests/engine/model/data/make_swa_golden.py",
            "reference": "llama.cpp via PyPI llama-cpp-python==%s (n_ctx 2048, n_batch 2048, "
                         "logits_all, 2 threads, default F16 KV cache)" % llama_cpp.__version__,
            "machine": os.uname().machine,
        },
        "model_file": MODEL,
        "model_sha256": sha,
        "prompts": [{"name": "raw_long_twice", "kind": "raw", "prompt_ids": [int(i) for i in ids],
                     "first_position": FIRST_POSITION, "top": top, "greedy": greedy}],
    }
    out = os.path.join(HERE, "gemma-3-270m-q4_k_m.swa.json")
    with open(out, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, separators=(",", ":")).replace("],[[", "],\n[["))
        f.write("\n")
    print("%s: %d prompt tokens, top-20 from position %d" % (out, len(ids), FIRST_POSITION))


if __name__ == "__main__":
    main()
