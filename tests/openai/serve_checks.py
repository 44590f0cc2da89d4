"""ember-serve against real clients. References: the official `openai` Python SDK (its parsing,
stream decoder and exception types), the OpenAI OpenAPI spec (every body and chunk validated
against its schemas; error bodies against ErrorResponse), and the server's own greedy answer to
the same request run alone (for streaming, seeds, stop strings and the load test)."""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import openai

from cancel_checks import check_prefill_disconnect, check_sigterm_streams, check_stalled_reader
from gateway_checks import check_bind, check_one_credential, check_path_models, check_rate_limits
from limit_checks import check_limits
from logprob_checks import check_logprobs
from load_checks import check_load
from serve_support import Schemas, Server, chat_args, metric, raw_request
from ignored_field_checks import check_ignored_field_types
from value_checks import (check_numeric_extremes, check_over_context_run, check_unknown_fields,
                          check_wrong_types)

KEY = "sk-ember-test-0123456789"
REQUEST_TIMEOUT = 4  # ember-serve --request-timeout for the checks (a slow client is cut after it)
FAILURES = []


def check(condition, what):
    if not condition:
        FAILURES.append(what)
        print("FAIL:", what, flush=True)


def check_sdk_and_schemas(server, schemas):
    client = server.client(KEY)
    model = server.model_id
    # /v1/models
    raw = client.models.with_raw_response.list()
    schemas.validate("ListModelsResponse", raw.http_response.json(), "GET /v1/models")
    check([m.id for m in raw.parse().data] == [model], "models lists the loaded model")

    # Non-streaming chat.
    raw = client.chat.completions.with_raw_response.create(**chat_args(model, "Name three colors."))
    body = raw.http_response.json()
    schemas.validate("CreateChatCompletionResponse", body, "chat completion")
    answer = raw.parse()
    text = answer.choices[0].message.content
    check(len(text) > 0, "non-streaming chat has text")
    check(answer.choices[0].finish_reason in ("stop", "length"), "finish_reason stop/length")
    usage = answer.usage
    check(usage.total_tokens == usage.prompt_tokens + usage.completion_tokens, "usage adds up")
    check(body["timings"]["predicted_n"] == usage.completion_tokens, "timings.predicted_n")
    for name in ("prompt_n", "prompt_ms", "prompt_per_second", "predicted_ms",
                 "predicted_per_second", "cache_n", "queue_ms", "ttft_ms", "itl_p50_ms",
                 "itl_p95_ms"):
        check(name in body["timings"], "timings." + name)

    # Streaming, with include_usage: the same greedy text, role first, finish last, usage chunk.
    stream = client.chat.completions.create(**chat_args(model, "Name three colors."), stream=True,
                                            stream_options={"include_usage": True})
    chunks = list(stream)
    check(chunks[0].choices[0].delta.role == "assistant", "role in the first delta")
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    check(streamed == text, f"streamed text equals the non-streamed one: {streamed!r} {text!r}")
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    check(finishes[-1] == answer.choices[0].finish_reason and all(f is None for f in finishes[:-1]),
          "finish_reason only in the last choice chunk")
    check(chunks[-1].choices == [] and chunks[-1].usage is not None, "usage chunk last")
    check(chunks[-1].usage.completion_tokens == usage.completion_tokens, "stream usage")

    # The raw SSE frames, each chunk validated; [DONE] last.
    frames = server.sse("/v1/chat/completions", KEY, {
        **chat_args(model, "Name three colors."), "stream": True,
        "stream_options": {"include_usage": True}})
    check(frames[-1] == "[DONE]", "stream ends with data: [DONE]")
    for frame in frames[:-1]:
        schemas.validate("CreateChatCompletionStreamResponse", json.loads(frame), "chat chunk")

    # Second turn: the first turn's prompt is reused from the prefix cache.
    history = [{"role": "system", "content": "You are a helpful assistant. " * 8},
               {"role": "user", "content": "Name three colors."}]
    first = client.chat.completions.create(model=model, messages=history, temperature=0,
                                           max_tokens=16)
    history += [{"role": "assistant", "content": first.choices[0].message.content},
                {"role": "user", "content": "And three animals?"}]
    second = client.chat.completions.create(model=model, messages=history, temperature=0,
                                            max_tokens=16)
    cached = second.usage.prompt_tokens_details.cached_tokens
    check(cached > 0, f"second turn reuses cached tokens ({cached})")

    # Seed reproduces a sampled answer.
    sampled = [client.chat.completions.create(
                   **chat_args(model, "Tell me a short story.", temperature=0.9, seed=1234)).choices[0].message.content
               for _ in range(2)]
    check(sampled[0] == sampled[1], "the same seed gives the same text")

    # stop: the greedy answer cut before the stop string, finish_reason stop.
    long = client.chat.completions.create(**chat_args(model, "Count from one to ten.")).choices[0]
    words = long.message.content.split()
    stop = words[min(3, len(words) - 1)]
    cut = client.chat.completions.create(**chat_args(model, "Count from one to ten."), stop=[stop])
    check(cut.choices[0].message.content == long.message.content[:long.message.content.find(stop)],
          f"stop {stop!r} cuts the answer")
    check(cut.choices[0].finish_reason == "stop", "stop gives finish_reason stop")

    # max_tokens -> length with exactly that many tokens.
    short = client.chat.completions.create(
        **chat_args(model, "Count from one to ten.", max_tokens=3))
    check(short.choices[0].finish_reason == "length" and short.usage.completion_tokens == 3,
          "max_tokens 3 gives length")
    newer = client.chat.completions.create(**chat_args(model, "Count from one to ten."),
                                           max_completion_tokens=3)
    check(newer.usage.completion_tokens == 3, "max_completion_tokens honoured")

    # /v1/completions, plain and streamed.
    raw = client.completions.with_raw_response.create(model=model, prompt="The capital of France is",
                                                      max_tokens=8, temperature=0)
    schemas.validate("CreateCompletionResponse", raw.http_response.json(), "completion")
    plain = raw.parse().choices[0].text
    frames = server.sse("/v1/completions", KEY, {"model": model, "prompt": "The capital of France is",
                                                  "max_tokens": 8, "temperature": 0, "stream": True})
    check(frames[-1] == "[DONE]", "completion stream ends with [DONE]")
    check("".join(json.loads(f)["choices"][0]["text"] for f in frames[:-1]) == plain,
          "streamed completion equals the plain one")

    # n = 2: two choices over one prompt.
    both = client.chat.completions.create(**chat_args(model, "Name three colors."), n=2)
    check(len(both.choices) == 2 and both.choices[0].message.content == text, "n=2")

    # The SDK's own exception types.
    for bad, param in (({"temperature": 5}, "temperature"), ({"top_logprobs": 21, "logprobs": True}, "top_logprobs"),
                       ({"tools": [{"type": "function", "function": {"name": "f"}}]}, "tools")):
        try:
            client.chat.completions.create(**chat_args(model, "hi", **bad))
            check(False, f"{param} refused")
        except openai.BadRequestError as e:
            check(e.body.get("param") == param if isinstance(e.body, dict) else False,
                  f"400 names param {param}: {e.body}")
    try:
        server.client("sk-wrong").models.list()
        check(False, "wrong key refused")
    except openai.AuthenticationError:
        pass
    try:
        client.chat.completions.create(**chat_args("../../etc/passwd", "hi"))
        check(False, "path model refused")
    except openai.NotFoundError as e:
        check(e.body.get("code") == "model_not_found", "404 code model_not_found")


def check_hostile(server, schemas):
    model = server.model_id
    auth = {"Authorization": "Bearer " + KEY}

    def expect(status, method, path, body=None, headers=None, what="", param=None):
        got, text, hdrs = raw_request(server.port, method, path, body, {**auth, **(headers or {})})
        check(got == status, f"{what}: status {got}, wanted {status}: {text[:200]!r}")
        if status >= 400 and got == status:
            try:
                parsed = json.loads(text)
                schemas.validate("ErrorResponse", parsed, what)
                if param is not None:
                    check(parsed["error"]["param"] == param, f"{what}: param {parsed['error']}")
            except ValueError:
                check(False, f"{what}: error body is not JSON: {text[:100]!r}")
        return got, text, hdrs

    chat = "/v1/chat/completions"
    good = json.dumps(chat_args(model, "hi", max_tokens=2)).encode()
    expect(400, "POST", chat, b"{\"model\": ", what="truncated JSON")
    expect(400, "POST", chat, b"[" * 200000 + b"]" * 200000, what="deep JSON")
    expect(400, "POST", chat, b"\"a string\"", what="non-object JSON")
    expect(400, "POST", chat, b"{\"model\":\"x\xff\xfe\",\"messages\":[]}", what="invalid UTF-8")
    expect(400, "POST", chat, json.dumps({"model": model, "messages": [{"role": "user",
           "content": "\\ud800"}]}).replace("\\\\ud800", "\\ud800").encode(), what="lone surrogate")
    for field, value in (("temperature", "NaN"), ("temperature", "1e308"), ("top_p", "-1"),
                         ("max_tokens", "1.5"), ("max_tokens", "0"), ("max_tokens", "\"5\""),
                         ("seed", "18446744073709551616"), ("n", "99"), ("top_k", "-1"),
                         ("frequency_penalty", "3"), ("min_p", "2"), ("stop", "[\"\"]"),
                         ("stream", "\"yes\"")):
        body = good[:-1] + f", \"{field}\": {value}}}".encode()
        expect(400, "POST", chat, body, what=f"{field}={value}",
               param=None if value == "NaN" else field)
    expect(400, "POST", chat, json.dumps({"model": model, "messages": "hi"}).encode(),
           what="messages as a string", param="messages")
    expect(400, "POST", chat, json.dumps({"model": model, "messages": [{"role": "tool",
           "content": "x"}]}).encode(), what="unknown role", param="messages[0].role")
    expect(400, "POST", "/v1/completions", json.dumps({"model": model, "prompt": [1, 99999999],
           "max_tokens": 2}).encode(), what="token id outside the vocabulary")
    expect(400, "POST", chat, json.dumps({**chat_args(model, "hi"), "stop": ["x"] * 17}).encode(),
           what="17 stop strings", param="stop")
    expect(400, "POST", chat, json.dumps({**chat_args(model, "hi"), "stop": ["x" * (1 << 20)]})
           .encode(), what="a 1 MB stop string", param="stop")
    over = json.dumps(chat_args(model, "word " * 3000)).encode()
    for i in range(20):  # over the 1024-token context: refused on the engine thread, each a 400
        expect(400, "POST", chat, over, what=f"over-context request {i}")
    for path in ("/etc/passwd", "%2e%2e%2fetc", "a\u0000b", "../" + model):
        expect(404, "POST", chat, json.dumps(chat_args(path, "hi")).encode(),
               what=f"model {path!r}", param="model")
    expect(413, "POST", chat, b"{\"a\": \"" + b"x" * (20 << 20) + b"\"}", what="20 MB body")
    many = {f"X-H{i}": "v" for i in range(10000)}
    got, _, _ = raw_request(server.port, "GET", "/v1/models", None, {**auth, **many})
    check(got in (431, 400), f"10,000 headers: {got}")
    expect(403, "GET", "/v1/models", headers={"Host": "evil.example.com"}, what="foreign Host")
    got, _, hdrs = expect(403, "GET", "/v1/models", headers={"Origin": "http://evil.example.com"},
                          what="foreign Origin")
    check("access-control-allow-origin" not in {k.lower() for k in hdrs}, "no CORS header")
    completion = json.dumps({"model": model, "prompt": "Hi", "max_tokens": 2}).encode()
    for method, path in (("GET", "/v1/models"), ("GET", "/metrics"), ("POST", chat),
                         ("POST", "/v1/completions"), ("GET", "/v1/models/" + model)):
        good = completion if path == "/v1/completions" else json.dumps(
            chat_args(model, "hi", max_tokens=2)).encode()
        for headers in ({}, {"Authorization": "Bearer "}, {"Authorization": "Bearer " + KEY[:-1]},
                        {"Authorization": "Basic " + KEY}, {"X-Api-Key": KEY + "x"}):
            got, text, _ = raw_request(server.port, method, path, good if method == "POST" else None,
                                       headers)
            check(got == 401, f"{method} {path} with {headers}: {got}")
        got, _, _ = raw_request(server.port, method, path, good if method == "POST" else None,
                                {"X-Api-Key": KEY})
        check(got == 200, f"{method} {path} with X-Api-Key: {got}")
    got, _, _ = raw_request(server.port, "GET", "/health", None, {})
    check(got == 200, "/health needs no key")
    # Still alive and answering.
    expect(200, "POST", chat, good, what="a valid request after the hostile ones")


def check_disconnect(server):
    model = server.model_id
    before = metric(server.port, KEY, "ember_client_disconnects_total")
    # Streaming: read two frames, then hang up.
    # ignore_eos: the answers run their 400 tokens, so each is still generating when its client
    # hangs up (an idle machine answers the question itself in ~0.2 s).
    body = json.dumps({**chat_args(model, "Count from one to five hundred.", max_tokens=400),
                       "stream": True, "ignore_eos": True}).encode()
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                 + KEY.encode() + b"\r\nContent-Type: application/json\r\nContent-Length: "
                 + str(len(body)).encode() + b"\r\n\r\n" + body)
    received = b""
    while received.count(b"data: ") < 2:
        received += sock.recv(4096)
    sock.close()
    # Non-streaming: hang up while it generates.
    sock = socket.create_connection(("127.0.0.1", server.port))
    body = json.dumps({**chat_args(model, "Count from one to five hundred.", max_tokens=400),
                       "ignore_eos": True}).encode()
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                 + KEY.encode() + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n"
                 + body)
    time.sleep(0.5)
    sock.close()
    deadline = time.time() + 5 * server.patience
    while time.time() < deadline:
        if (metric(server.port, KEY, "ember_requests_running") == 0 and
                metric(server.port, KEY, "ember_client_disconnects_total") == before + 2):
            break
        time.sleep(0.05)
    check(metric(server.port, KEY, "ember_client_disconnects_total") == before + 2,
          "both disconnects counted")
    check(metric(server.port, KEY, "ember_requests_running") == 0, "running back to 0")
    check(metric(server.port, KEY, "ember_kv_blocks_used") == 0, "KV blocks freed")


def check_usage_and_log(serve, server, workdir):
    server.stop()
    out = subprocess.run([serve, "usage", "--json", "--usage-db", server.usage_db],
                         capture_output=True, text=True, check=True).stdout
    rows = json.loads(out)
    mine = [r for r in rows if r["key"] == "key-1"]
    check(len(mine) == 1 and mine[0]["requests"] > 10 and mine[0]["cached_tokens"] > 0,
          f"usage meter rows {rows}")
    log = open(server.log_file).read()
    check(log.count("request id=") >= mine[0]["requests"], "one log line per request")
    check("Tell me a short story" not in log and KEY not in log, "no prompt text, no key in the log")
    with Server(serve, server.model_path, workdir, "main", KEY) as again:
        again.client(KEY).chat.completions.create(**chat_args(again.model_id, "hi", max_tokens=2))
        again.stop()
    rows = json.loads(subprocess.run([serve, "usage", "--json", "--usage-db", server.usage_db],
                                     capture_output=True, text=True, check=True).stdout)
    after = [r for r in rows if r["key"] == "key-1"]
    check(after[0]["requests"] == mine[0]["requests"] + 1, "usage survives a restart")


def check_sigterm(serve, model_path, workdir):
    with Server(serve, model_path, workdir, "sigterm", KEY) as server:
        frames, first_frame = [], threading.Event()

        def stream():
            body = {**chat_args(server.model_id, "Count from one to five hundred.", max_tokens=400),
                    "stream": True}
            try:
                for frame in server.iter_sse("/v1/chat/completions", KEY, body, timeout=60):
                    frames.append(frame)
                    first_frame.set()
            except httpx.HTTPError:
                frames.append("closed")
            first_frame.set()
        t = threading.Thread(target=stream)
        t.start()
        first_frame.wait(timeout=60)
        started = time.time()
        server.process.send_signal(signal.SIGTERM)  # while the answer is being streamed
        code = server.process.wait(timeout=15)
        t.join(timeout=5)
        check(time.time() - started < 10, "exits within seconds of SIGTERM")
        check(code == 0, f"exit code {code}")
        check(frames and "error" in frames[-1],
              f"the open stream ended with an error event: {frames[-1:]} after {len(frames)} frames")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--spec", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--part", choices=["api", "load"], required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    started = time.time()
    if args.part == "load":
        check_load(args.serve, args.model, args.workdir, KEY, check)
        print(f"{len(FAILURES)} failure(s), {time.time() - started:.0f} s", flush=True)
        sys.exit(1 if FAILURES else 0)
    schemas = Schemas(args.spec)
    with Server(args.serve, args.model, args.workdir, "main", KEY, fresh=True,
                request_timeout=REQUEST_TIMEOUT) as server:
        check_sdk_and_schemas(server, schemas)
        check_logprobs(server, schemas, KEY, check, args.model)
        check_hostile(server, schemas)
        check_numeric_extremes(server, schemas, KEY, check)
        check_wrong_types(server, schemas, KEY, check)
        check_ignored_field_types(server, schemas, KEY, check)
        check_unknown_fields(server, KEY, check)
        check_over_context_run(server, KEY, check)
        check_one_credential(server, schemas, KEY, check)
        check_bind(args.serve, args.model, server, check)
        check_path_models(server, args.workdir, KEY, check)
        check_limits(server, schemas, KEY, check, REQUEST_TIMEOUT)
        check_disconnect(server)
        check_usage_and_log(args.serve, server, args.workdir)
    check_sigterm(args.serve, args.model, args.workdir)
    check_sigterm_streams(args.serve, args.model, args.workdir, KEY, check)
    check_rate_limits(args.serve, args.model, args.workdir, schemas, KEY, check)
    check_prefill_disconnect(args.serve, args.model, args.workdir, KEY, check)
    check_stalled_reader(args.serve, args.model, args.workdir, KEY, check)
    print(f"{len(FAILURES)} failure(s), {schemas.validated} bodies validated, "
          f"{time.time() - started:.0f} s", flush=True)
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
