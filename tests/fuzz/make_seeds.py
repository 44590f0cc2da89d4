#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz harnesses (run once; the seeds are committed).

corpus/gguf: small GGUF v3 files written by hand after the layout in gguf.md of the ggml
repository: every metadata value type, arrays, F32/F16/Q4_0/Q8_0 tensors, a BPE vocabulary
with merges and a ChatML template, a SentencePiece vocabulary with scores and token types,
plus version 2 and cut-short variants. corpus/chat_template: the built-in templates' sources
and small templates using each statement kind. corpus/tokenizer_*: text and token-id inputs
(first byte: the harness mode).

    python3 tests/fuzz/make_seeds.py
"""
import os
import re
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)


def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def value(t, v):
    fmt = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", BOOL: "?",
           U64: "Q", I64: "q", F64: "d"}
    if t == STR:
        return gstr(v)
    if t == ARR:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(value(et, x) for x in items)
    return struct.pack("<" + fmt[t], v)


def gguf(kv, tensors, version=3, alignment=32):
    """kv: [(key, type, value)]; tensors: [(name, ggml_type, shape, data_bytes)]."""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kv))
    for k, t, v in kv:
        out += gstr(k) + struct.pack("<I", t) + value(t, v)
    offset = 0
    for name, gt, shape, data in tensors:
        out += gstr(name) + struct.pack("<I", len(shape)) + b"".join(struct.pack("<Q", d) for d in shape)
        out += struct.pack("<IQ", gt, offset)
        offset += (len(data) + alignment - 1) // alignment * alignment
    out += b"\0" * ((-len(out)) % alignment)
    for _, _, _, data in tensors:
        out += data + b"\0" * ((-len(data)) % alignment)
    return out


CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
          "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
          "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def bpe_vocab():
    tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + [chr(c) for c in range(ord("a"), ord("z") + 1)]
    tokens += ["\u0120", "\u010a", "he", "ll", "hell", "hello", "\u0120w", "or", "ld"]
    types = [3, 3, 3] + [1] * (len(tokens) - 3)
    merges = ["h e", "l l", "he ll", "hell o", "\u0120 w", "o r", "l d"]
    return [("general.architecture", STR, "llama"), ("general.name", STR, "seed-bpe"),
            ("llama.context_length", U32, 64), ("llama.block_count", U32, 1),
            ("tokenizer.ggml.model", STR, "gpt2"), ("tokenizer.ggml.pre", STR, "smollm"),
            ("tokenizer.ggml.tokens", ARR, (STR, tokens)),
            ("tokenizer.ggml.token_type", ARR, (I32, types)),
            ("tokenizer.ggml.merges", ARR, (STR, merges)),
            ("tokenizer.ggml.bos_token_id", U32, 1), ("tokenizer.ggml.eos_token_id", U32, 2),
            ("tokenizer.chat_template", STR, CHATML)]


def spm_vocab():
    tokens = ["<unk>", "<s>", "</s>", "<start_of_turn>", "<end_of_turn>", "<0x0A>", "<0xE4>",
              "\u2581", "\u2581hello", "\u2581world", "h", "e", "l", "o", "w", "r", "d"]
    scores = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, -2.0, -2.5] + [-5.0] * 7
    types = [2, 3, 3, 3, 3, 6, 6] + [1] * 10
    return [("general.architecture", STR, "gemma3"), ("tokenizer.ggml.model", STR, "llama"),
            ("tokenizer.ggml.tokens", ARR, (STR, tokens)),
            ("tokenizer.ggml.scores", ARR, (F32, scores)),
            ("tokenizer.ggml.token_type", ARR, (I32, types)),
            ("tokenizer.ggml.bos_token_id", U32, 1), ("tokenizer.ggml.eos_token_id", U32, 2),
            ("tokenizer.ggml.unknown_token_id", U32, 0),
            ("tokenizer.ggml.add_bos_token", BOOL, True)]


def every_type():
    return [("general.alignment", U32, 32), ("t.u8", U8, 200), ("t.i8", I8, -5), ("t.u16", U16, 60000),
            ("t.i16", I16, -30000), ("t.u32", U32, 4000000000), ("t.i32", I32, -7), ("t.f32", F32, 1.5),
            ("t.bool", BOOL, True), ("t.str", STR, "h\u00e9llo"), ("t.u64", U64, 2**63),
            ("t.i64", I64, -(2**40)), ("t.f64", F64, 2.25),
            ("t.arr", ARR, (I32, [1, 2, 3])), ("t.strs", ARR, (STR, ["a", "", "c"])),
            ("t.nested", ARR, (ARR, [(U8, [1]), (U8, [])]))]


def tensors():
    f32 = struct.pack("<8f", *range(8))
    f16 = struct.pack("<8e", *[0.5 * i for i in range(8)])
    q4_0 = struct.pack("<e", 0.25) + bytes(range(16))           # one block of 32
    q8_0 = struct.pack("<e", 0.5) + bytes((i * 7) % 256 for i in range(32))
    return [("a.weight", 0, [8], f32), ("b.weight", 1, [4, 2], f16), ("c.weight", 2, [32], q4_0),
            ("d.weight", 8, [32, 1], q8_0)]


def write(dirname, name, data):
    path = os.path.join(HERE, "corpus", dirname)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def main():
    full = gguf(every_type() + bpe_vocab(), tensors())
    write("gguf", "bpe_chatml_tensors.gguf", full)
    write("gguf", "spm_vocab.gguf", gguf(spm_vocab(), tensors()[:1]))
    write("gguf", "every_type_v2.gguf", gguf(every_type(), tensors(), version=2))
    write("gguf", "empty_v3.gguf", gguf([], []))
    write("gguf", "cut_in_tensor_table.gguf", full[: len(full) - 200])
    write("gguf", "header_only.gguf", full[:24])

    src = open(os.path.join(ROOT, "engine", "chat", "builtin_templates.cpp"), encoding="utf-8").read()
    define = src[src.index("#define EMBER_CONTENT_MACRO"):src.index("constexpr")]
    macro = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', define)).replace("\\n", "\n")
    for i, m in enumerate(re.finditer(r'R"JINJA\((.*?)\)JINJA"', src, re.S)):
        write("chat_template", f"builtin_{i}.jinja", macro + m.group(1))
    write("chat_template", "chatml.jinja", CHATML)
    small = {
        "macro_call.jinja": "{% macro m(x, y=2) %}[{{ x }}|{{ y }}|{{ caller() if caller else '' }}]{% endmacro %}"
                            "{% call m(1) %}body{% endcall %}{{ m('a', y='b') }}",
        "namespace_loop.jinja": "{% set ns = namespace(n=0) %}{% for m in messages if m.role != 'tool' %}"
                                "{% set ns.n = ns.n + 1 %}{{ loop.index }}/{{ loop.length }}:{{ m.content|trim|length }}"
                                "{% if loop.last %}!{% endif %}{% else %}none{% endfor %}{{ ns.n }}",
        "filters.jinja": "{{ messages|map(attribute='role')|join(',') }}{{ tools|tojson(indent=2) }}"
                         "{{ 'a-b-c'.split('-')|reverse|list }}{{ '%05.1f|%s'|format(3.14159, 'x') }}"
                         "{{ messages[1].content.replace('<', '&lt;')|upper }}{{ range(3)|sum }}",
        "set_block_filter.jinja": "{% set x %}{% for i in range(3) %}{{ i }}{% endfor %}{% endset %}"
                                  "{% filter upper %}{{ x * 2 }}{% endfilter %}{{ x[1:] }}{{ x[::-1] }}",
        "raise.jinja": "{% if messages[0].role != 'user' %}{{ raise_exception('first must be user') }}{% endif %}",
        "dict_items.jinja": "{% for k, v in {'a': 1, 'b': [1, 2]}.items() %}{{ k }}={{ v }};{% endfor %}"
                            "{{ strftime_now('%Y-%m-%d') }}{{ (1, 2) ~ none ~ true }}{{ 7 // 2 }}{{ 2 ** 10 }}",
        "whitespace_control.jinja": "{%- for m in messages -%}\n  {{- m.content -}}\n{%- endfor -%}{# c #}",
    }
    for name, text in small.items():
        write("chat_template", name, text)

    texts = ["Hello world", "<|im_start|>system\nYou are <|im_end|>", "h\u00e9llo \u4e2d\u6587 \U0001F600",
             "\xff\xfe broken", "   leading spaces\n\n\ttabs", "<start_of_turn>user\n</s><s>"]
    for i, t in enumerate(texts):
        raw = t.encode("utf-8", "surrogatepass") if "\xff" not in t else t.encode("latin-1")
        for mode in (0, 1):
            for model in ("bpe", "spm"):
                write(f"tokenizer_{model}", f"text_{mode}_{i}", bytes([mode]) + raw)
    ids_bpe = [1, 9690, 198, 2683, 359, 253, 5356, 2, 30, 0, 49151]
    ids_spm = [2, 105, 2364, 107, 9259, 1902, 106, 236743, 262143, 0]
    write("tokenizer_bpe", "ids", bytes([2]) + b"".join(struct.pack("<i", i) for i in ids_bpe))
    write("tokenizer_spm", "ids", bytes([2]) + b"".join(struct.pack("<i", i) for i in ids_spm))


if __name__ == "__main__":
    main()
