"""logprobs / top_logprobs through ember-serve. References: the OpenAPI schemas (every body and
chunk validated), the official openai SDK's parsing of them, hand checks that hold for any model
(a greedy token is the first of its top_logprobs, every logprob <= 0, the tokens' bytes spell the
answer, streamed equals non-streamed), and llama.cpp itself (llamacpp_logprobs.py run with the
llama-cpp-python peer venv): the same model file and prompt ids give the same greedy tokens, the
first one's log-probabilities equal to 1e-4 (both come from one batch over the prompt), later ones
within 0.3 nat (measured up to 0.21: the two engines round differently once the answer's own
tokens are in the cache)."""
import json
import os
import subprocess

FIRST_TOKEN_TOLERANCE = 1e-4
LATER_TOLERANCE = 0.3


def check_logprobs(server, schemas, key, check, model_path):
    client = server.client(key)
    model = server.model_id
    args = dict(model=model, messages=[{"role": "user", "content": "Name three colors."}],
                temperature=0, max_tokens=12, logprobs=True, top_logprobs=3)

    raw = client.chat.completions.with_raw_response.create(**args)
    body = raw.http_response.json()
    schemas.validate("CreateChatCompletionResponse", body, "chat completion with logprobs")
    answer = raw.parse().choices[0]
    content = answer.logprobs.content
    check(len(content) == raw.parse().usage.completion_tokens, "one logprobs entry per token")
    check(b"".join(bytes(t.bytes) for t in content).decode() == answer.message.content,
          "the tokens' bytes spell the answer")
    for t in content:
        check(t.logprob <= 0, f"logprob {t.logprob} <= 0")
        check(len(t.top_logprobs) == 3, "three alternatives")
        check(t.top_logprobs[0].token == t.token and t.top_logprobs[0].logprob == t.logprob,
              f"greedy token {t.token!r} is the most likely one")
        check(all(a.logprob >= b.logprob for a, b in zip(t.top_logprobs, t.top_logprobs[1:])),
              "alternatives most likely first")

    # Streamed: the same tokens and values, chunk by chunk, each chunk valid.
    frames = server.sse("/v1/chat/completions", key, {**args, "stream": True})
    streamed = []
    for frame in frames[:-1]:
        chunk = json.loads(frame)
        schemas.validate("CreateChatCompletionStreamResponse", chunk, "chat chunk with logprobs")
        if chunk["choices"] and chunk["choices"][0]["logprobs"]:
            streamed += chunk["choices"][0]["logprobs"]["content"]
    check([(t["token"], t["logprob"]) for t in streamed] ==
          [(t.token, t.logprob) for t in content], "streamed logprobs equal the plain ones")
    plain = client.chat.completions.create(**{**args, "logprobs": None, "top_logprobs": None})
    check(plain.choices[0].logprobs is None, "no logprobs unless asked")

    # Sampled at temperature 1.5: the values are the model's, not the tempered ones, so the
    # sampled tokens' logprobs differ from a greedy run only where the token differs.
    hot = client.chat.completions.create(**{**args, "temperature": 1.5, "seed": 3})
    check(all(t.logprob <= 0 and len(t.top_logprobs) == 3 for t in hot.choices[0].logprobs.content),
          "sampled answer has logprobs")
    check(hot.choices[0].logprobs.content[0].top_logprobs[0].logprob == content[0].logprob,
          "the first position's distribution does not depend on temperature")

    # Legacy completions: logprobs N, streamed and not.
    raw = client.completions.with_raw_response.create(
        model=model, prompt="The capital of France is", max_tokens=8, temperature=0, logprobs=2)
    body = raw.http_response.json()
    schemas.validate("CreateCompletionResponse", body, "completion with logprobs")
    lp = raw.parse().choices[0].logprobs
    check("".join(lp.tokens) == raw.parse().choices[0].text, "completion tokens spell the text")
    offsets = [0]
    for t in lp.tokens[:-1]:
        offsets.append(offsets[-1] + len(t))
    check(lp.text_offset == offsets, f"text_offset {lp.text_offset} counts characters")
    check(all(len(top) <= 2 and max(top.values()) >= v for top, v in zip(lp.top_logprobs, lp.token_logprobs)),
          "top_logprobs hold the greedy token's value")
    frames = server.sse("/v1/completions", key, {"model": model, "prompt": "The capital of France is",
                                                 "max_tokens": 8, "temperature": 0, "logprobs": 2,
                                                 "stream": True})
    tokens, offsets = [], []
    for frame in frames[:-1]:
        chunk = json.loads(frame)
        # The spec has no completion chunk schema; the streamed chunk is CreateCompletionResponse
        # with finish_reason null until the last (as OpenAI streams it).
        shaped = json.loads(frame)
        shaped["choices"][0]["finish_reason"] = shaped["choices"][0]["finish_reason"] or "length"
        schemas.validate("CreateCompletionResponse", shaped, "completion chunk with logprobs")
        tokens += chunk["choices"][0]["logprobs"]["tokens"]
        offsets += chunk["choices"][0]["logprobs"]["text_offset"]
    check(tokens == lp.tokens and offsets == lp.text_offset, "streamed completion logprobs")

    compare_with_llamacpp(server, key, check, model_path)


def compare_with_llamacpp(server, key, check, model_path):
    venv = os.environ.get("EMBER_LLAMACPP_PEER_VENV",
                          os.path.expanduser("~/.cache/ember/venv-llamacpp-peer"))
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        # CI builds the peer venv (scripts/test.sh), so there a missing one is a failure.
        check(os.environ.get("CI") != "true", f"llama.cpp peer venv missing at {venv}")
        print(f"SKIP: llama.cpp comparison (no peer venv at {venv}; "
              "scripts/setup-llamacpp-venv.sh builds it)", flush=True)
        return
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "llamacpp_logprobs.py")
    count, top = 12, 3
    ref = json.loads(subprocess.run([python, script, model_path, "The capital of France is",
                                     str(count), str(top)], check=True, capture_output=True,
                                    text=True, timeout=180).stdout)
    body = server.client(key).completions.create(model=server.model_id, prompt=ref["prompt_ids"],
                                                 max_tokens=count, temperature=0, logprobs=top)
    lp = body.choices[0].logprobs
    worst = 0.0
    agreed = 0
    for i, (token, value, alternatives) in enumerate(zip(lp.tokens, lp.token_logprobs,
                                                         lp.top_logprobs)):
        r = ref["tokens"][i]
        if token.encode() != bytes.fromhex(r["bytes"]):
            break  # the answers part; later positions see different text
        agreed += 1
        tolerance = FIRST_TOKEN_TOLERANCE if i == 0 else LATER_TOLERANCE
        ours = list(alternatives.values())
        theirs = [v for _, v in r["top"]]
        for a, b in [(value, r["logprob"])] + list(zip(ours, theirs)):
            worst = max(worst, abs(a - b)) if i > 0 else worst
            check(abs(a - b) <= tolerance, f"token {i} {token!r}: {a} vs llama.cpp {b}")
    check(agreed >= 8, f"greedy tokens agree with llama.cpp for {agreed} of {count}")
    print(f"logprobs vs llama.cpp: {agreed} tokens agree, largest difference after the first "
          f"{worst:.4f} nat", flush=True)
