#!/usr/bin/env python3
"""Writes reference token ids for Ember's SentencePiece tests, tokenized by an implementation
independent of Ember's: Hugging Face transformers, which converts a GGUF's tokenizer.ggml.*
metadata into a `tokenizers` BPE tokenizer itself (for Gemma: GemmaTokenizer with byte fallback,
no prefix space and merges rebuilt from the vocabulary).

  gemma3    Gemma 3's own vocabulary (a real model file) -> data/gemma3_reference.json

(Llama-2-style vocabularies with special tokens are checked against llama.cpp instead, see
make_llamacpp_tokenizer_reference.py: transformers adds the dummy-prefix space only at the start
of the text, llama.cpp after every special token, which is what Llama 2's chat format expects.)

Not run by the tests (it needs packages and the model); the tests read its output. To refresh:

    python3 -m venv /tmp/ref-venv
    /tmp/ref-venv/bin/pip install transformers tokenizers sentencepiece protobuf gguf torch
    /tmp/ref-venv/bin/python tests/tools/make_spm_reference.py gemma3 \
        ~/.cache/ember/models/gemma-3-270m-q4_k_m.gguf \
        tests/engine/tokenizer/data/gemma3_reference.json

`special: false` cases are encoded with split_special_tokens=True (control-token text stays
ordinary text, as for user input); `special: true` cases let control tokens match (text rendered
by a chat template). No BOS/EOS is added.
"""
import hashlib
import importlib.metadata
import json
import os
import sys

GEMMA3_CASES = [
    ("english", "Hello world! This is a test of the tokenizer.", False),
    ("korean", "안녕하세요 세계", False),
    ("cjk", "東京は日本の首都です。我想在apple工作1314151天～", False),
    ("code", "def add(a, b):\n    return a + b\n\nprint(add(2, 3))\n", False),
    ("emoji", "I love 🦙 and 🚀! 😶‍🌫️ ✅", False),
    ("digits", "The year 2024 has 366 days; pi is 3.14159 and 1,000,000 > 999.", False),
    ("whitespace", "a  b   c\n\n\nd\t\te    f \n \n", False),
    ("leading_spaces", "   leading and trailing   ", False),
    ("accents", "Ünïcödé naïve café — “quotes” and ‘apostrophes’", False),
    ("html", "<table><tr><td>1</td></tr></table> <b>bold</b>", False),
    ("template_special",
     "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n", True),
    ("template_as_text",
     "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n", False),
]

CASE_SETS = {"gemma3": GEMMA3_CASES}


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in CASE_SETS:
        sys.exit("usage: make_spm_reference.py gemma3 VOCAB.gguf OUTPUT.json")
    case_set, model_path, output_path = sys.argv[1], sys.argv[2], sys.argv[3]
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(
        os.path.dirname(os.path.abspath(model_path)), gguf_file=os.path.basename(model_path))
    cases = []
    for name, text, special in CASE_SETS[case_set]:
        ids = tokenizer.encode(text, add_special_tokens=False, split_special_tokens=not special)
        cases.append({"name": name, "text": text, "special": special, "ids": ids})

    versions = {p: importlib.metadata.version(p)
                for p in ("transformers", "tokenizers", "gguf", "torch")}
    document = {
        "provenance": {
            "generator": "tests/tools/make_spm_reference.py",
            "reference": "Hugging Face transformers AutoTokenizer.from_pretrained(gguf_file=...)",
            "tokenizer_class": type(tokenizer).__name__,
            "model_file": os.path.basename(model_path),
            "model_sha256": sha256_of(model_path),
            "packages": versions,
            "python": sys.version.split()[0],
            "bos_eos_added": False,
        },
        "cases": cases,
    }
    with open(output_path, "w", encoding="utf-8") as f:
        json.dump(document, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
