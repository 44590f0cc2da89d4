#!/usr/bin/env python3
"""Records llama.cpp's logits and greedy continuations for Ember's fidelity tests.

For each real model and each prompt: the prompt token ids (llama.cpp's tokenizer), the top-20
logits at every prompt position, and 32 greedy tokens. Written to tests/data/golden/<stem>.json.
CI does not rebuild these files; the tests compare against them.

Reference: llama.cpp through PyPI llama-cpp-python==0.3.36 (built from source by pip), default
settings (F16 KV cache, no flash attention), one context per prompt, seed irrelevant (greedy).
    /usr/bin/python3 -m venv ~/.cache/ember/venv-llamacpp
    ~/.cache/ember/venv-llamacpp/bin/pip install llama-cpp-python==0.3.36 jinja2
    ~/.cache/ember/venv-llamacpp/bin/python scripts/make-golden.py
"""
import hashlib
import json
import os
import sys

import jinja2
import llama_cpp
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS_DIR = os.environ.get("EMBER_MODELS_DIR", os.path.expanduser("~/.cache/ember/models"))
OUT_DIR = os.path.join(ROOT, "tests", "data", "golden")
TOP_K = 20
GREEDY_TOKENS = 32

LONG_TEXT = (
    "The history of the printing press begins in the fifteenth century, when Johannes Gutenberg "
    "combined movable metal type, oil-based inks and a screw press adapted from wine making. "
    "Before that, books in Europe were copied by hand, mostly in monasteries, and a single Bible "
    "could take a scribe more than a year. Block printing had long been known in East Asia, and "
    "movable type made of clay, wood and later bronze was used in China and Korea; the Jikji, "
    "printed in Korea in 1377 with metal type, is the oldest surviving book of its kind. "
    "Gutenberg's contribution was a system that made printing fast and cheap enough to change "
    "the economics of text. Within fifty years presses were operating in more than two hundred "
    "European cities, and millions of volumes had been produced. The consequences reached far "
    "beyond books: standardized texts supported the growth of science, because results could be "
    "shared and checked; pamphlets spread religious and political arguments; and vernacular "
    "languages gained stable spellings and grammars. Printers became entrepreneurs, editors and "
    "sometimes censors' targets. Newspapers appeared in the seventeenth century, and the rotary "
    "press, steam power and later paper made from wood pulp lowered costs again in the nineteenth. "
    "Each step widened the audience for the written word. Historians still debate how much the "
    "press caused and how much it merely accelerated changes already under way, such as the rise "
    "of universities, trade networks and urban literacy. What is clear is that the ability to "
    "reproduce identical copies of a text transformed how knowledge was stored, criticised and "
    "passed on, and many scholars compare the shift to the one brought about by digital networks "
    "in our own time. The comparison has limits. A printed book was expensive to correct once "
    "the sheets had been run, so errors travelled with every copy, and printers competed by "
    "pirating one another's editions long before copyright law existed. Authorship itself changed "
    "meaning: a name on a title page became an asset, and writers began to negotiate with "
    "booksellers rather than depend only on patrons. Libraries grew from a few hundred volumes to "
    "many thousands, which in turn demanded catalogues, indexes and new ways to find information. "
    "Readers, too, changed their habits, moving from reading a few texts intensively and aloud to "
    "reading many texts silently and quickly. In the following summary, we list the three most important effects of the "
    "printing press on European society, with one example for each:\n1."
)

CHATS = {
    "chat_short": [{"role": "user", "content": "What is the capital of France?"}],
    "chat_system_korean": [
        {"role": "system", "content": "You are a concise assistant."},
        {"role": "user", "content": "안녕하세요! Can you say hello in Korean and English?"},
    ],
    "chat_multiturn": [
        {"role": "user", "content": "Give me a word that rhymes with cat."},
        {"role": "assistant", "content": "Hat."},
        {"role": "user", "content": "And one that rhymes with dog?"},
    ],
}
RAW = {
    "raw_short": "The three primary colors are",
    "raw_code": "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
    "raw_long": LONG_TEXT,
}

# Gemma 3's GGUF carries no chat template; this is Gemma's documented turn format.
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{% set role = 'model' if m.role == 'assistant' "
    "else m.role %}{% if role == 'system' %}{% set role = 'user' %}{% endif %}"
    "<start_of_turn>{{ role }}\n{{ m.content | trim }}<end_of_turn>\n{% endfor %}"
    "<start_of_turn>model\n")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def render_chat(llm, messages):
    template = llm.metadata.get("tokenizer.chat_template") or GEMMA_TEMPLATE
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    bos = llm.detokenize([llm.token_bos()], special=True).decode() if llm.token_bos() >= 0 else ""
    eos = llm.detokenize([llm.token_eos()], special=True).decode()
    return env.from_string(template).render(messages=messages, add_generation_prompt=True,
                                            bos_token=bos, eos_token=eos)


def record(llm, name, kind, ids):
    llm.reset()
    llm.eval(ids)
    scores = np.array(llm.scores[: len(ids)], dtype=np.float32)  # (n_prompt, vocab)
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
    return {"name": name, "kind": kind, "prompt_ids": [int(i) for i in ids], "top": top,
            "greedy": greedy}


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    for file in ["SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"]:
        path = os.path.join(MODELS_DIR, file)
        llm = llama_cpp.Llama(path, n_ctx=2048, n_batch=2048, logits_all=True, n_threads=2,
                              seed=0, verbose=False)
        add_bos = llm.metadata.get("tokenizer.ggml.add_bos_token", "false") == "true"
        prompts = []
        for name, messages in CHATS.items():
            text = render_chat(llm, messages)
            # The rendered template already holds BOS where the model wants it.
            ids = llm.tokenize(text.encode(), add_bos=False, special=True)
            prompts.append(record(llm, name, "chat", ids))
        for name, text in RAW.items():
            ids = llm.tokenize(text.encode(), add_bos=add_bos, special=False)
            prompts.append(record(llm, name, "raw", ids))
        doc = {
            "provenance": {
                "generator": "scripts/make-golden.py",
                "reference": "llama.cpp via PyPI llama-cpp-python==%s (n_ctx 2048, n_batch 2048, "
                             "logits_all, 2 threads, default F16 KV cache)" % llama_cpp.__version__,
                "machine": os.uname().machine,
            },
            "model_file": file,
            "model_sha256": sha256(path),
            "prompts": prompts,
        }
        out = os.path.join(OUT_DIR, os.path.splitext(file)[0] + ".json")
        with open(out, "w", encoding="utf-8") as f:
            # One prompt position per line keeps the files diffable.
            f.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
                    .replace("],[[", "],\n[["))
            f.write("\n")
        print("%s: %s" % (out, ", ".join("%s=%d tokens" % (p["name"], len(p["prompt_ids"]))
                                         for p in prompts)), file=sys.stderr)


if __name__ == "__main__":
    main()
