#!/usr/bin/env python3
"""Records llama.cpp's logits on SmolLM2-135M-Instruct cut to 2 layers, for test_cut_model.

The cut file is written by our own tool first:

    build/bin/ember-cli cut-model --model ~/.cache/ember/models/SmolLM2-135M-Instruct.Q4_1.gguf \
        --layers 2 --out /tmp/SmolLM2-135M-Instruct.cut2.Q4_1.gguf
    ~/.cache/ember/venv-llamacpp/bin/python tests/tools/make_cut_model_reference.py \
        /tmp/SmolLM2-135M-Instruct.cut2.Q4_1.gguf

llama.cpp (PyPI llama-cpp-python==0.3.36: F16 KV cache, no flash attention, n_ctx 512, 2 threads)
loads the cut file on its own, so it checks that the file is a well-formed 2-layer model, and its
logits are an outside reference for what the engine computes on it. Kept: the prompt's token ids
(llama.cpp's tokenizer), llama.cpp's top-20 logits at every position, 16 greedy tokens, and the
SHA-256 of the cut file (the test writes the cut again and checks it gets the same bytes).
"""
import hashlib
import json
import os
import sys

import llama_cpp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "engine", "core", "data", "SmolLM2-135M-Instruct.cut2.llamacpp.json")
PROMPT = ("The lighthouse keeper climbed the spiral stairs every evening at dusk, counting the "
          "steps out of habit: one hundred and twelve, never more and never less.")
TOP_K = 20
GREEDY_TOKENS = 16


def main():
    path = sys.argv[1]
    llm = llama_cpp.Llama(path, n_ctx=512, n_batch=512, logits_all=True, n_threads=2, seed=0,
                          verbose=False)
    ids = llm.tokenize(PROMPT.encode(), add_bos=False, special=False)
    llm.reset()
    llm.eval(ids)
    scores = np.array(llm.scores[: len(ids)], dtype=np.float32)
    top = []
    for row in scores:
        idx = np.argsort(-row, kind="stable")[:TOP_K]
        top.append([[int(i), round(float(row[i]), 5)] for i in idx])
    greedy = []
    last = scores[-1]
    for _ in range(GREEDY_TOKENS):
        tok = int(np.argmax(last))
        greedy.append(tok)
        llm.eval([tok])
        last = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
    doc = {
        "provenance": {
            "generator": "tests/tools/make_cut_model_reference.py",
            "reference": "llama.cpp via PyPI llama-cpp-python==%s (n_ctx 512, n_batch 512, "
                         "logits_all, 2 threads, default F16 KV cache)" % llama_cpp.__version__,
            "cut": "ember-cli cut-model --model SmolLM2-135M-Instruct.Q4_1.gguf --layers 2",
        },
        "model_file": os.path.basename(path),
        "source_file": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "model_sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
        "prompts": [{"name": "raw_lighthouse", "kind": "raw", "prompt_ids": [int(i) for i in ids],
                     "top": top, "greedy": greedy}],
    }
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, separators=(",", ":")).replace("],[[", "],\n[["))
        f.write("\n")
    print("%s: %d prompt tokens, greedy %s" % (OUT, len(ids), greedy))


if __name__ == "__main__":
    main()
