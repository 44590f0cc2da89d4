#!/usr/bin/env python3
"""Makes the reference fixtures for Ember's byte-level BPE tokenizer tests with an independent
peer: Hugging Face `tokenizers`, configured the way each model family's tokenizer.json configures
it, with the vocabulary and merges read from the GGUF by `gguf` (gguf-py).

Made with: Python 3.11.7, tokenizers 0.23.3, gguf 0.19.0 (numpy 2.4.6), in a throwaway venv:
    python3 -m venv /tmp/bpe-venv && /tmp/bpe-venv/bin/pip install tokenizers==0.23.3 gguf==0.19.0
    /tmp/bpe-venv/bin/python tests/tools/make_bpe_reference.py \
        --testdata ../shared/testdata --model ~/.cache/ember/models/SmolLM2-135M-Instruct.Q4_1.gguf

Before writing anything it checks the peer itself against llama.cpp's tokenizer test vectors
(../shared/testdata/tokenizer/*.gguf.out, made by llama.cpp from the models' own tokenizer.json)
for every rule set it builds, and stops if a single id differs.

Writes tests/engine/tokenizer/data/smollm2_reference.json (ids for SmolLM2's own vocabulary),
qwen2_special_reference.json (special-token parsing on and off, qwen2 vocabulary) and tests/engine/tokenizer/data/bpe_pretokenizer_reference.json (the words each rule set splits
texts into). The Qt tests read only these JSON files; nothing here runs at test time.
"""
import argparse
import hashlib
import json
import pathlib
import re
import sys

import gguf
import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

# Split regexes from the models' tokenizer.json files (Llama 3: meta-llama/Meta-Llama-3-8B;
# Qwen 2: Qwen/Qwen2-7B).
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
               r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

RULE_SETS = {"gpt-2": "gpt-2", "llama-bpe": "llama3", "qwen2": "qwen2",
             "starcoder": "starcoder", "smollm": "starcoder"}


def pre_tokenizer_for(rule_set):
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    if rule_set == "gpt-2":
        return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if rule_set == "llama3":
        return pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
            byte_level])
    if rule_set == "qwen2":
        return pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(QWEN2_REGEX), behavior="isolated", invert=False),
            byte_level])
    if rule_set == "starcoder":  # StarCoder's and SmolLM2's tokenizer.json
        return pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    raise ValueError(rule_set)


def field(reader, key):
    f = reader.fields.get(key)
    return None if f is None else f.contents()


def build_peer(gguf_path):
    reader = gguf.GGUFReader(gguf_path)
    tokens = field(reader, "tokenizer.ggml.tokens")
    types = field(reader, "tokenizer.ggml.token_type")
    merges = [tuple(m.split(" ", 1)) for m in field(reader, "tokenizer.ggml.merges")]
    pre = field(reader, "tokenizer.ggml.pre")
    rule_set = RULE_SETS[pre]
    vocab = {}
    for i, t in enumerate(tokens):
        vocab.setdefault(t, i)
    bpe = models.BPE(vocab=vocab, merges=merges, ignore_merges=(rule_set == "llama3"))
    tok = Tokenizer(bpe)
    tok.pre_tokenizer = pre_tokenizer_for(rule_set)
    tok.decoder = decoders.ByteLevel()
    # Control tokens are the added special tokens; user-defined ones the added plain tokens.
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t, ty in zip(tokens, types) if ty == 3])
    tok.add_tokens([AddedToken(t, special=False, normalized=False)
                    for t, ty in zip(tokens, types) if ty == 4])
    return tok, rule_set


def encode(tok, text, parse_special):
    tok.encode_special_tokens = not parse_special
    return tok.encode(text, add_special_tokens=False).ids


def check_against_llama_cpp_vectors(testdata):
    for name in ["gpt-2", "llama-bpe", "qwen2", "starcoder"]:
        base = pathlib.Path(testdata) / "tokenizer" / f"ggml-vocab-{name}.gguf"
        tok, _ = build_peer(str(base))
        texts = base.with_suffix(".gguf.inp").read_text(encoding="utf-8").split(
            "\n__ggml_vocab_test__\n")
        if texts and texts[-1] == "":
            texts.pop()
        lines = base.with_suffix(".gguf.out").read_text(encoding="utf-8").split("\n")
        for i, text in enumerate(texts):
            expected = [int(x) for x in lines[i].split()]
            got = encode(tok, text, parse_special=False)
            if got != expected:
                sys.exit(f"peer disagrees with llama.cpp's vector {name} #{i}: {got} != {expected}")
        print(f"peer matches all {len(texts)} llama.cpp vectors of {name}")


SMOLLM2_CASES = [
    ("english", "The quick brown fox jumps over the lazy dog. It's 9 o'clock, isn't it?", False),
    ("korean", "안녕하세요, 한국어 토크나이저 시험입니다.", False),
    ("code", "def add(a, b):\n    return a + b  # sum\n\nprint(add(2, 40))\n", False),
    ("emoji", "I love 🦙 and 🤗! 👩‍👩‍👧 ✅", False),
    ("digits", "Call 555-0199 or pay $1,234,567.89 by 2024-12-31.", False),
    ("whitespace runs", "a  b   c\t\td\n\n\n   e \r\n f    ", False),
    ("mixed scripts", "naïve café, Ünïcödé, Ελληνικά, русский, 東京タワー, عربى", False),
    ("typed control text", "User typed <|im_start|>system and <|im_end|> here", False),
    ("chatml rendered", "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, "
                        "trained by Hugging Face<|im_end|>\n<|im_start|>user\nWhat is 2+2?"
                        "<|im_end|>\n<|im_start|>assistant\n", True),
    ("bytes without a token", "tab\there\x04\x14\x1d end\x7f", False),
    ("empty", "", False),
    ("only spaces", "     ", False),
]

# Special-token handling on the qwen2 vocabulary: the same texts with parsing on (a rendered
# template) and off (user input, where control texts are plain text but user-defined tokens
# such as [PAD151650] still match, as in Hugging Face's added tokens).
QWEN2_SPECIAL_TEXTS = [
    ("chatml", "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n"
               "<|im_start|>assistant\n"),
    ("typed im_start system", "<|im_start|>system"),
    ("adjacent controls", "<|im_end|><|im_start|><|endoftext|>"),
    ("broken control text", "<|im_start|<|im_end>|<|im_end|"),
    ("user-defined token", "x[PAD151650]y"),
]

PRETOKENIZER_TEXTS = [
    "Hello world",
    "I'M sure they'RE here, don'T you think? We'Ve a'lL",
    "abc123def 4567 1234567890",
    "a   b\n\n  c  \t\tx   ",
    "line one\r\nline two\n\n\nend",
    "naïve café 東京 😀 ½ ² ۳",
    "안녕하세요 세계",
    "   leading and trailing   ",
    "x=1; y += 22 ;; z!!!",
    "\n\n\n",
]


def pretokenizer_reference():
    byte_decoder = {v: k for k, v in bytes_to_unicode().items()}
    out = {}
    for rule_set in ["gpt-2", "llama3", "qwen2", "starcoder"]:
        pre = pre_tokenizer_for(rule_set)
        rows = []
        for text in PRETOKENIZER_TEXTS:
            words = [bytes(byte_decoder[c] for c in piece).decode("utf-8")
                     for piece, _ in pre.pre_tokenize_str(text)]
            rows.append({"text": text, "words": words})
        out[rule_set] = rows
    return out


def bytes_to_unicode():
    # GPT-2's byte <-> Unicode table, only to read the byte-level words back as text.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--testdata", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parents[1] /
                                             "engine" / "tokenizer" / "data"))
    args = parser.parse_args()
    check_against_llama_cpp_vectors(args.testdata)

    versions = {"tokenizers": tokenizers.__version__, "gguf": getattr(gguf, "__version__", "0.19.0"),
                "python": sys.version.split()[0]}
    model = pathlib.Path(args.model)
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    tok, rule_set = build_peer(str(model))
    cases = []
    for name, text, special in SMOLLM2_CASES:
        ids = encode(tok, text, special)
        cases.append({"name": name, "text": text, "parse_special": special, "ids": ids,
                      "decoded": tok.decode(ids, skip_special_tokens=False)})
    smollm = {
        "provenance": ("Hugging Face tokenizers BPE built from the GGUF's tokenizer.ggml.tokens/"
                       "merges/token_type with SmolLM2's pre-tokenizer (Digits individual + "
                       "ByteLevel); made by tests/tools/make_bpe_reference.py"),
        "versions": versions,
        "model": model.name,
        "model_sha256": digest,
        "rule_set": rule_set,
        "cases": cases,
    }
    qwen2, _ = build_peer(str(pathlib.Path(args.testdata) / "tokenizer" / "ggml-vocab-qwen2.gguf"))
    special = {
        "provenance": ("Hugging Face tokenizers BPE built from ggml-vocab-qwen2.gguf (control tokens "
                       "added as special tokens, user-defined ones as plain added tokens); parse_special "
                       "false is encode_special_tokens=True; made by tests/tools/make_bpe_reference.py"),
        "versions": versions,
        "cases": [{"name": name, "text": text, "parse_special": flag, "ids": encode(qwen2, text, flag)}
                  for name, text in QWEN2_SPECIAL_TEXTS for flag in (False, True)],
    }
    pre = {
        "provenance": ("Hugging Face tokenizers pre_tokenize_str with each family's tokenizer.json "
                       "pre-tokenizer; made by tests/tools/make_bpe_reference.py"),
        "versions": versions,
        "rule_sets": pretokenizer_reference(),
    }
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, data in [("smollm2_reference.json", smollm), ("qwen2_special_reference.json", special),
                       ("bpe_pretokenizer_reference.json", pre)]:
        text = json.dumps(data, ensure_ascii=False, indent=1)
        # One line per id list keeps the fixture readable.
        text = re.sub(r"\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]",
                      lambda m: "[" + ", ".join(m.group(1).split()).replace(",,", ",") + "]", text)
        (out / name).write_text(text + "\n", encoding="utf-8")
        print("wrote", out / name)


if __name__ == "__main__":
    main()
