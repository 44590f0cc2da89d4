#!/usr/bin/env python3
"""Records llama.cpp's tokenization of a set of texts with each real model's own vocabulary.

Reference: llama.cpp as packaged by PyPI llama-cpp-python==0.3.36 (it builds llama.cpp from
source), loaded with vocab_only=True. Run it in the venv scripts/bench-vs-llamacpp.sh makes, or:
    python3 -m venv /tmp/v && /tmp/v/bin/pip install llama-cpp-python==0.3.36
    /tmp/v/bin/python tests/tools/make_llamacpp_tokenizer_reference.py > \
        tests/engine/tokenizer/data/real_models_llamacpp.json
With `--llama-spm VOCAB.gguf` it instead writes the special-token cases of the Llama 2
SentencePiece vocabulary (../shared/testdata/tokenizer/ggml-vocab-llama-spm.gguf) to stdout,
for tests/engine/tokenizer/data/spm_llama_reference.json.
The output is stored in the repo; the tests compare against it and never run llama.cpp.
"""
import hashlib
import json
import os
import sys

import llama_cpp

MODELS_DIR = os.environ.get("EMBER_MODELS_DIR", os.path.expanduser("~/.cache/ember/models"))
MODELS = ["SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"]

# (text, parse_special)
TEXTS = [
    ("Hello world", False),
    (" Hello, world! How are you?", False),
    ("안녕하세요, 세계! 오늘 날씨가 좋네요.", False),
    ("한국어와 English를 섞은 문장 123", False),
    ("def add(a, b):\n    return a + b\n", False),
    ("🦙 emoji 😶‍🌫️ and ✅", False),
    ("3.14159 1234567890 1,000,000", False),
    ("  two  spaces\n\n\ttab   three", False),
    ("Ünïcödé naïve café – “quotes” …", False),
    ("<|im_start|>user typed this<|im_end|>", False),
    ("<start_of_turn>user typed this<end_of_turn>", False),
    ("<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\n안녕?<|im_end|>\n"
     "<|im_start|>assistant\n", True),
    ("<start_of_turn>user\n안녕하세요?<end_of_turn>\n<start_of_turn>model\n", True),
    ("", False),
]


# (name, text, parse_special) for the Llama 2 vocabulary: where the dummy-prefix space goes
# around special tokens.
LLAMA_SPM_CASES = [
    ("template_special", "<s>[INST] Hello, how are you? [/INST] Fine.</s><s>[INST] Bye [/INST]",
     True),
    ("template_as_text", "<s>[INST] Hello [/INST]</s>", False),
    ("special_mid_text", "Hello <s> world</s>", True),
    ("special_then_space", "</s>  two spaces", True),
    ("only_special", "<s></s>", True),
    ("unicode_after_special", "<s>안녕하세요 🦙", True),
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def llama_spm(path):
    llm = llama_cpp.Llama(path, vocab_only=True, verbose=False)
    cases = [{"name": name, "text": text, "special": special,
              "ids": llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)}
             for name, text, special in LLAMA_SPM_CASES]
    doc = {"provenance": {
        "generator": "tests/tools/make_llamacpp_tokenizer_reference.py --llama-spm",
        "reference": "llama.cpp via PyPI llama-cpp-python==%s, Llama(vocab_only=True)"
                     ".tokenize(text, add_bos=False, special=parse_special)"
                     % llama_cpp.__version__,
        "model_file": os.path.basename(path),
        "model_sha256": sha256(path)},
        "cases": cases}
    json.dump(doc, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--llama-spm":
        llama_spm(sys.argv[2])
        return
    out = {
        "provenance": "llama.cpp via PyPI llama-cpp-python==%s, Llama(vocab_only=True)"
                      ".tokenize(text, add_bos=False, special=parse_special)"
                      % llama_cpp.__version__,
        "models": {},
    }
    for name in MODELS:
        path = os.path.join(MODELS_DIR, name)
        llm = llama_cpp.Llama(path, vocab_only=True, verbose=False)
        cases = []
        for text, special in TEXTS:
            ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)
            cases.append({"text": text, "special": special, "ids": ids})
        out["models"][name] = {"sha256": sha256(path), "cases": cases}
    # One case per line keeps the fixture readable and its diffs small.
    sys.stdout.write(compact(out) + "\n")


def compact(out):
    lines = ["{", ' "provenance": %s,' % json.dumps(out["provenance"]), ' "models": {']
    models = list(out["models"].items())
    for i, (name, model) in enumerate(models):
        lines.append('  %s: {"sha256": "%s", "cases": [' % (json.dumps(name), model["sha256"]))
        cases = [json.dumps(c, ensure_ascii=False) for c in model["cases"]]
        lines.append(",\n".join("   " + c for c in cases))
        lines.append("  ]}" + ("," if i + 1 < len(models) else ""))
    lines += [" }", "}"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
