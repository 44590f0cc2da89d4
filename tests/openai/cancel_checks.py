"""A client that hangs up while its long prompt is being read (prefill), with another request
queued behind it on a one-slot server: the prompt is aborted within one engine step of the
hang-up being seen, the queued request starts at once, and the request log says `cancelled`.
References: the Generator contract (abort ends a request as cancelled within one engine step),
the engine's own step size (a prompt is read in chunks of at most 512 tokens a step, so an
uninterrupted prompt's prefill_ms * 512 / its tokens is the time of one full step on this
machine),
and the request log line's own stages (total_ms: submission to the last event)."""
import json
import random
import re
import socket
import threading
import time

from serve_support import Server, metric

WORDS = ("river stone light winter garden music paper window silver morning forest candle "
         "harbor meadow thunder lantern orchard velvet copper island mirror feather ember").split()
STEP_TOKENS = 512  # the scheduler's token budget per step
POLL_MS = 25       # how often a waiting HTTP thread looks at its socket
SLACK_MS = 250     # scheduling noise on a shared 2-core machine, plus a quarter step (below)


def long_prompt(seed, words=1650):
    rng = random.Random(seed)  # a different text each: no prefix shared through the cache
    return f"Note {seed}: " + " ".join(rng.choice(WORDS) for _ in range(words))


def log_lines(path):
    lines = {}
    for line in open(path).read().splitlines():
        if "request id=" in line:
            fields = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))
            lines[fields["id"]] = fields
    return lines


def print_last_requests(log_file, count, what):
    """How the server logged its last `count` requests (for a failed count of them)."""
    for f in list(log_lines(log_file).values())[-count:]:
        print(f"  {what} logged: status={f['status']} finish={f['finish']} "
              f"completion={f['completion']} note={f.get('note', '')}", flush=True)


def post_raw(port, key, body):
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                 + key.encode() + b"\r\nContent-Type: application/json\r\nContent-Length: "
                 + str(len(body)).encode() + b"\r\n\r\n" + body)
    return sock


def check_prefill_disconnect(serve, model_path, workdir, key, check):
    with Server(serve, model_path, workdir, "prefill", key, parallel=1, queue=4, fresh=True,
                context=2048) as server:
        client = server.client(key)
        ask = lambda text, n=1: dict(model=server.model_id, temperature=0, max_tokens=n,
                                     messages=[{"role": "user", "content": text}])
        # One step's time here and now: an uninterrupted prompt of the same length.
        whole = client.chat.completions.with_raw_response.create(**ask(long_prompt(1)))
        timings = whole.http_response.json()["timings"]
        prompt_tokens = whole.parse().usage.prompt_tokens
        steps = -(-prompt_tokens // STEP_TOKENS)
        step_ms = timings["prompt_ms"] * STEP_TOKENS / prompt_tokens  # a full chunk's step
        check(steps >= 4, f"the long prompt takes {steps} steps (wanted >= 4)")

        before = metric(server.port, key, "ember_client_disconnects_total")
        sock = post_raw(server.port, key, json.dumps(ask(long_prompt(2))).encode())
        sent = time.time()
        queued = {}
        queued_started = threading.Event()

        def second():
            queued_started.set()
            queued["answer"] = client.chat.completions.with_raw_response.create(**ask("Say hi.", 4))
            queued["done"] = time.time()
        behind = threading.Thread(target=second)
        time.sleep(0.05)  # the long prompt reaches the engine first
        behind.start()
        queued_started.wait()
        time.sleep(1.3 * step_ms / 1000)  # inside the prefill: during its second step
        sock.close()
        closed_ms = (time.time() - sent) * 1000
        behind.join(timeout=60)
        check("answer" in queued, "the queued request was answered")
        deadline = time.time() + 5 * server.patience
        while time.time() < deadline and metric(server.port, key, "ember_requests_running") > 0:
            time.sleep(0.02)
        check(metric(server.port, key, "ember_client_disconnects_total") == before + 1,
              "the hang-up is counted")
        check(metric(server.port, key, "ember_kv_blocks_used") == 0, "its KV blocks are freed")
        server.stop()  # flushes the log

        lines = log_lines(server.log_file)
        cancelled = [f for f in lines.values() if f["status"] == "499"]
        check(len(cancelled) == 1, f"one request logged as 499: {cancelled}")
        if not cancelled or "answer" not in queued:
            return
        a = cancelled[0]
        check(a["finish"] == "cancelled" and a["completion"] == "0" and
              "disconnected" in a.get("note", ""), f"the log line says cancelled: {a}")
        total_ms = float(a["total_ms"])
        # Seen within a poll, then at most the step under way finishes before the abort.
        bound = closed_ms + POLL_MS + step_ms + SLACK_MS + step_ms / 4
        check(total_ms <= bound, f"aborted {total_ms:.0f} ms after submission, hang-up at "
              f"{closed_ms:.0f} ms, one step {step_ms:.0f} ms (bound {bound:.0f})")
        check(total_ms < timings["prompt_ms"], "aborted before its prompt was read")
        b = lines[queued["answer"].http_response.headers["x-request-id"]]
        check(b["status"] == "200", f"the queued request succeeded: {b}")
        # It waited for the slot only until the abort freed it (plus a step's scheduling).
        check(float(b["queue_ms"]) <= total_ms + step_ms + SLACK_MS + step_ms / 4,
              f"the queued request started {b['queue_ms']} ms after submission, the slot was "
              f"freed at {total_ms:.0f} ms")
        print(f"prefill hang-up: {prompt_tokens} tokens in {steps} steps of {step_ms:.0f} ms; "
              f"closed at {closed_ms:.0f} ms, cancelled at {total_ms:.0f} ms, next started at "
              f"{float(b['queue_ms']):.0f} ms", flush=True)


def resident_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


STALLED_TOKENS = 900


def check_stalled_reader(serve, model_path, workdir, key, check, write_timeout=2):
    """A client that asks for a long stream and never reads it: the answer backs up in the
    socket buffers (a 4 KiB receive buffer here, the server's fixed 64 KiB send buffer, frames of
    ~2 KB with 20 top logprobs), the
    server's write waits at most --write-timeout, then the request is aborted and its slot
    freed; meanwhile another client is answered, and the server's memory does not grow with the
    unread answer (the engine thread only queues events; no socket write happens on it)."""
    with Server(serve, model_path, workdir, "stalled", key, parallel=2, queue=4, fresh=True,
                extra_args=["--write-timeout", str(write_timeout)]) as server:
        client = server.client(key)
        client.chat.completions.create(model=server.model_id, max_tokens=2,
                                       messages=[{"role": "user", "content": "hi"}])
        before_kib = resident_kib(server.process.pid)
        disconnects = metric(server.port, key, "ember_client_disconnects_total")
        # 900 tokens (of the 1024-token context) take the engine several times the write timeout
        # (about 6 s at 6.6 ms a token with logprobs), so only the timeout can end it early.
        body = json.dumps({"model": server.model_id, "max_tokens": STALLED_TOKENS,
                           "ignore_eos": True, "stream": True, "logprobs": True,
                           "top_logprobs": 20, "temperature": 0,
                           "messages": [{"role": "user", "content": "Count to a thousand."}]})
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(("127.0.0.1", server.port))
        stalled.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        b"Authorization: Bearer " + key.encode() + b"\r\nContent-Length: "
                        + str(len(body)).encode() + b"\r\n\r\n" + body.encode())
        time.sleep(0.5)
        served_meanwhile = 0
        for _ in range(3):  # the other slot answers while the stalled stream holds its own
            answer = client.chat.completions.create(model=server.model_id, max_tokens=4,
                                                    messages=[{"role": "user", "content": "hi"}])
            served_meanwhile += answer.usage.completion_tokens == 4
        check(served_meanwhile == 3, "another client is answered while one stalls")
        deadline = time.time() + 60 * server.patience
        while time.time() < deadline and (
                metric(server.port, key, "ember_client_disconnects_total") < disconnects + 1 or
                metric(server.port, key, "ember_requests_running") > 0):
            time.sleep(0.1)
        grown_kib = resident_kib(server.process.pid) - before_kib
        check(metric(server.port, key, "ember_client_disconnects_total") == disconnects + 1,
              "the stalled client is cut off")
        check(metric(server.port, key, "ember_requests_running") == 0 and
              metric(server.port, key, "ember_kv_blocks_used") == 0, "its slot and blocks are freed")
        check(grown_kib < 64 * 1024, f"resident memory grew {grown_kib} KiB (bound 64 MiB)")
        stalled.close()
        server.stop()
        line = [f for f in log_lines(server.log_file).values() if f["status"] == "499"]
        check(len(line) == 1 and line[0]["finish"] == "cancelled" and
              int(line[0]["completion"]) < STALLED_TOKENS,
              f"the stalled stream was aborted before its {STALLED_TOKENS} tokens: {line}")
        if line:
            print(f"stalled reader: aborted after {line[0]['completion']} of {STALLED_TOKENS} "
                  f"tokens, {float(line[0]['total_ms']):.0f} ms; RSS +{grown_kib} KiB", flush=True)


def check_sigterm_streams(serve, model_path, workdir, key, check):
    """SIGTERM with two streams running and two queued on a two-slot server: every one ends with
    an SSE error event (the server's word: shutting down), and the process exits 0 within
    seconds. Reference: the SDK's stream decoder turns such an event into an APIError."""
    import httpx
    import signal
    with Server(serve, model_path, workdir, "sigterm4", key, parallel=2, queue=4) as server:
        ends, first = [None] * 4, threading.Barrier(3)

        def stream(i):
            body = {"model": server.model_id, "max_tokens": 400, "ignore_eos": True,
                    "stream": True, "messages": [{"role": "user", "content": f"Count, {i}."}]}
            frames = []
            try:
                for frame in server.iter_sse("/v1/chat/completions", key, body, timeout=60):
                    frames.append(frame)
                    if len(frames) == 2 and i < 2:
                        first.wait(timeout=60)
            except httpx.HTTPError as e:
                frames.append(f"transport error {e!r}")
            ends[i] = frames[-1] if frames else "nothing"
        threads = [threading.Thread(target=stream, args=(i,)) for i in range(2)]
        for t in threads: t.start()
        first.wait(timeout=60)  # both running streams have text
        threads += [threading.Thread(target=stream, args=(i,)) for i in range(2, 4)]
        for t in threads[2:]: t.start()
        deadline = time.time() + 10 * server.patience
        while time.time() < deadline and metric(server.port, key, "ember_requests_waiting") < 2:
            time.sleep(0.02)
        check(metric(server.port, key, "ember_requests_waiting") == 2, "two streams queued")
        started = time.time()
        server.process.send_signal(signal.SIGTERM)
        code = server.process.wait(timeout=20)
        for t in threads: t.join(timeout=10)
        check(code == 0 and time.time() - started < 10, f"exit {code} within seconds of SIGTERM")
        for i, end in enumerate(ends):
            try:
                error = json.loads(end)["error"]
                check("shutting down" in error["message"], f"stream {i} error: {error}")
            except (TypeError, ValueError, KeyError):
                check(False, f"stream {i} ({'running' if i < 2 else 'queued'}) ended with {end!r}")
