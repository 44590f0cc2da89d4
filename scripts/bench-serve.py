#!/usr/bin/env python3
"""TTFT and decode speed through HTTP against the engine's own figures, and against
llama-cpp-python's server on the same model file and threads.

  scripts/bench-serve.py --serve build/bin/ember-serve --model M.gguf [--threads 2]
                         [--llamacpp-python VENV/bin/python] [--tokens 64]

For each request, the client measures TTFT (sending the request to the first content chunk)
and decode tokens/s ((chunks - 1) / (last chunk - first chunk)); ember-serve also reports the
engine's own TTFT and decode rate for the same request (`timings`), so the HTTP cost is the
difference measured side by side. The timed client is a raw socket (see ChunkedReader); httpx
(the tests' venv has it) only polls for readiness. The peer is llama_cpp.server from the venv
scripts/setup-llamacpp-venv.sh builds (AVX2, no AMX); it answers one request at a time, so at
c=8 its TTFT includes the wait behind the others (it is started with --interrupt_requests False:
by default a new request cuts off the one streaming)."""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import threading
import time

import httpx

PROMPT = "Write a long story about a dragon who learns to read."


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url, process, seconds=180):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server exited with {process.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit("server did not start")


class ChunkedReader:
    """Reads an HTTP/1.1 response with chunked transfer from a raw socket: the stdlib client is
    used for timing because an HTTP library's own per-request cost (Python, under the GIL) is
    several milliseconds, more than what is measured."""

    def __init__(self, sock):
        self.sock, self.buffer = sock, b""

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("closed")
        self.buffer += data

    def _line(self):
        while b"\r\n" not in self.buffer:
            self._fill()
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def headers(self):
        status = int(self._line().split()[1])
        while self._line():
            pass
        return status

    def chunks(self):
        while True:
            size = int(self._line().split(b";")[0], 16)
            if size == 0:
                return
            while len(self.buffer) < size + 2:
                self._fill()
            data, self.buffer = self.buffer[:size], self.buffer[size + 2:]
            yield data


def one_stream(base, model, tokens, out):
    try:
        out.append(timed_stream(base, model, tokens))
    except (OSError, RuntimeError, ValueError) as e:
        out.append({"error": str(e)})


def timed_stream(base, model, tokens):
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": PROMPT}],
                       "temperature": 0, "max_tokens": tokens, "stream": True,
                       "stream_options": {"include_usage": True}}).encode()
    host, port = base.split("//")[1].split(":")
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    request = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
               ).encode() + body
    times, timings = [], None
    sent = time.perf_counter()
    sock.sendall(request)
    reader = ChunkedReader(sock)
    if reader.headers() != 200:
        raise RuntimeError("the server did not answer 200")
    pending = b""
    for data in reader.chunks():
        now = time.perf_counter()
        pending += data.replace(b"\r\n", b"\n")  # sse-starlette (llama_cpp.server) ends lines with CRLF
        while b"\n\n" in pending:
            frame, pending = pending.split(b"\n\n", 1)
            if not frame.startswith(b"data: "):
                continue  # a comment (": ping") or another field
            payload = frame[len(b"data: "):]
            if payload == b"[DONE]":
                continue
            chunk = json.loads(payload)
            for c in chunk["choices"]:
                if c["delta"].get("content"):
                    times.append(now)
            if "timings" in chunk:
                timings = chunk["timings"]
    sock.close()
    ttft = (times[0] - sent) * 1000 if times else float("nan")
    decode = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else float("nan")
    return {"ttft_ms": ttft, "decode_tps": decode, "timings": timings, "chunks": len(times)}


def run(base, model, tokens, concurrency, rounds, walls=None):
    results = []
    for _ in range(rounds):
        started = time.perf_counter()
        threads = [threading.Thread(target=one_stream, args=(base, model, tokens, results))
                   for _ in range(concurrency)]
        for t in threads: t.start()
        for t in threads: t.join()
        if walls is not None:
            walls.append(time.perf_counter() - started)
    failed = [r["error"] for r in results if "error" in r]
    if failed:
        raise RuntimeError(f"{len(failed)} of {len(results)} streams failed: {failed[0]}")
    return results


def median(values):
    values = [v for v in values if v == v]
    return statistics.median(values) if values else float("nan")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--serve", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--llamacpp-python", default=os.path.expanduser(
        "~/.cache/ember/venv-llamacpp-peer/bin/python"))
    a = p.parse_args()
    print("Figures from a shared, noisy machine: compare the ratios, not the absolute numbers.")

    port = free_port()
    ember = subprocess.Popen([a.serve, "--model", a.model, "--port", str(port), "--threads",
                              str(a.threads), "--parallel", "8", "--context", "1024",
                              "--log-file", "/dev/null"], stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    figures = {}
    try:
        wait_ready(base + "/health", ember)
        model = httpx.get(base + "/v1/models").json()["data"][0]["id"]
        run(base, model, 8, 1, 1)  # warm-up
        for c in (1, 8):
            walls = []
            r = run(base, model, a.tokens, c, 3 if c == 1 else 1, walls)
            figures[("ember", c)] = r
            figures[("ember-wall", c)] = walls
            http_ttft = median([x["ttft_ms"] for x in r])
            engine_ttft = median([x["timings"]["ttft_ms"] for x in r])
            added = median([x["ttft_ms"] - x["timings"]["ttft_ms"] for x in r])
            http_tps = median([x["decode_tps"] for x in r])
            engine_tps = median([x["timings"]["predicted_per_second"] for x in r])
            print(f"ember-serve c={c}: TTFT http {http_ttft:.1f} ms vs engine {engine_ttft:.1f} ms "
                  f"(median added per request {added:+.2f} ms); decode http {http_tps:.1f} vs engine "
                  f"{engine_tps:.1f} tok/s per stream (ratio {http_tps / engine_tps:.3f})")
    finally:
        ember.send_signal(signal.SIGTERM)
        ember.wait()

    if not os.path.exists(a.llamacpp_python) or subprocess.run(
            [a.llamacpp_python, "-c", "import llama_cpp.server"], capture_output=True).returncode:
        print(f"llama_cpp.server not available under {a.llamacpp_python}: no peer figures")
        return
    port = free_port()
    peer = subprocess.Popen([a.llamacpp_python, "-m", "llama_cpp.server", "--model", a.model,
                             "--port", str(port), "--n_threads", str(a.threads), "--n_ctx", "1024",
                             # queue concurrent requests (its default cuts the running one off)
                             "--interrupt_requests", "False"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base + "/v1/models", peer)
        model = httpx.get(base + "/v1/models").json()["data"][0]["id"]
        try:
            run(base, model, 8, 1, 1)
        except Exception as e:  # noqa: BLE001 - report and stop, the peer is what failed
            print(f"llama_cpp.server failed a streamed request ({e}): no peer figures")
            return
        for c in (1, 8):
            walls = []
            r = run(base, model, a.tokens, c, 3 if c == 1 else 1, walls)
            mine = figures[("ember", c)]
            # All streams' tokens over the rounds' wall time: what the server delivers in all.
            total_l = sum(x["chunks"] for x in r) / sum(walls)
            total_e = sum(x["chunks"] for x in mine) / sum(figures[("ember-wall", c)])
            ttft_l, ttft_e = median([x["ttft_ms"] for x in r]), median([x["ttft_ms"] for x in mine])
            tps_l, tps_e = median([x["decode_tps"] for x in r]), median([x["decode_tps"] for x in mine])
            print(f"c={c}: TTFT ember {ttft_e:.1f} ms vs llama_cpp.server {ttft_l:.1f} ms "
                  f"(llama_cpp.server / ember {ttft_l / ttft_e:.2f}x); decode per stream ember "
                  f"{tps_e:.1f} vs {tps_l:.1f} tok/s (ember / llama_cpp.server {tps_e / tps_l:.2f}x); "
                  f"delivered in all ember {total_e:.1f} vs {total_l:.1f} tok/s "
                  f"({total_e / total_l:.2f}x)")
    finally:
        peer.send_signal(signal.SIGTERM)
        peer.wait()


if __name__ == "__main__":
    main()
