"""Reference log-probabilities from llama.cpp (llama-cpp-python, run with the peer venv's
Python): tokenizes a prompt, generates greedily, and prints as JSON the prompt's token ids and,
per generated token, its bytes (hex), its log-probability and the top alternatives, all from a
log-softmax (float64) of llama.cpp's raw logits (logits_all=True), as llama.cpp's server reports
them by default.
Usage: python llamacpp_logprobs.py MODEL PROMPT TOKENS TOP"""
import json
import sys

import numpy as np
from llama_cpp import Llama


def main():
    model, prompt, count, top = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    llm = Llama(model_path=model, n_ctx=512, n_threads=2, logits_all=True, verbose=False)
    ids = llm.tokenize(prompt.encode(), add_bos=False, special=False)
    llm.eval(ids)
    generated = []
    for _ in range(count):
        generated.append(int(np.argmax(llm.scores[llm.n_tokens - 1])))
        llm.eval([generated[-1]])
    # The logits once more, from one batch over prompt and answer: llama.cpp's one-token decode
    # path rounds differently from its batch path (up to ~0.1 nat here); the batch one is compared.
    llm.reset()
    llm.eval(ids + generated)
    out = []
    for i, token in enumerate(generated):
        logits = np.asarray(llm.scores[len(ids) - 1 + i], dtype=np.float64)
        logprobs = logits - logits.max()
        logprobs -= np.log(np.exp(logprobs).sum())
        best = np.argsort(-logprobs, kind="stable")[:top]
        out.append({
            "bytes": llm.detokenize([token]).hex(),
            "logprob": float(logprobs[token]),
            "top": [[llm.detokenize([int(t)]).hex(), float(logprobs[t])] for t in best],
        })
    print(json.dumps({"prompt_ids": list(ids), "tokens": out}))


if __name__ == "__main__":
    main()
