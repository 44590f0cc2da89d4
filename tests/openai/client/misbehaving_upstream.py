#!/usr/bin/env python3
"""An OpenAI-compatible upstream that misbehaves on request, for the client's fault tests.

It binds 127.0.0.1 on a port the OS picks and prints that port as its first stdout line. It stops
by itself: when its stdin closes (the test is gone) or after --lifetime seconds.

The request's "model" picks the behaviour:
  good          a well-formed stream, written in small pieces with CRLF endings and comments
  drip          60 chunks, 50 ms apart (for cancelling)
  slow          one chunk, then silence for 10 s
  cut           two chunks, then the connection closes inside a chunked-encoding frame
  ended         two chunks, then a clean end without finish_reason or [DONE]
  malformed     one chunk, then a data line that is not JSON
  json          a 200 with a JSON body instead of an event stream
  429-once      429 with Retry-After: 1 the first time, then a good stream
  429-long      429 with Retry-After: 3600
  503-twice     503 twice, then a good stream
  500           500 with an OpenAI error body
  anything else 404, as vLLM answers an unknown model
GET /v1/models lists them, GET /health answers 200, GET /stats returns the counters.
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODELS = ["good", "drip", "slow", "cut", "ended", "malformed", "json", "429-once", "429-long",
          "503-twice", "500"]
counters = {"requests": {}, "disconnects": 0}
lock = threading.Lock()


def chunk(content=None, finish=None, role=None):
    delta = {}
    if role:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    return {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0,
            "model": "test", "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                          "finish_reason": finish}]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def send_json(self, status, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, message, kind, headers=()):
        self.send_json(status, {"error": {"message": message, "type": kind, "param": None,
                                          "code": status}}, headers)

    def authorized(self):
        key = self.server.api_key
        if key and self.headers.get("Authorization") != "Bearer " + key:
            self.error(401, "Invalid API key", "invalid_request_error")
            return False
        return True

    def do_GET(self):
        if self.path == "/health":
            self.send_json(200, {"status": "ok"})
        elif self.path == "/stats":
            with lock:
                self.send_json(200, counters)
        elif self.path == "/v1/models":
            if self.authorized():
                self.send_json(200, {"object": "list", "data": [
                    {"id": m, "object": "model", "owned_by": "test"} for m in MODELS]})
        else:
            self.error(404, "no route " + self.path, "not_found")

    # Chunked transfer encoding, written by hand so that "cut" can stop inside a frame.
    def frame(self, data: bytes):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def event(self, obj, split=False):
        data = ("data: " + (obj if isinstance(obj, str) else json.dumps(obj)) + "\r\n\r\n").encode()
        if not split:
            self.frame(data)
            return
        # Pieces of 7 bytes, so lines, CR and LF, and UTF-8 split over frames.
        for i in range(0, len(data), 7):
            self.frame(data[i:i + 7])
            time.sleep(0.001)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length) or b"{}")
        if not self.authorized():
            return
        model = request.get("model", "")
        with lock:
            n = counters["requests"].get(model, 0) + 1
            counters["requests"][model] = n
        try:
            self.answer(model, n)
        except (BrokenPipeError, ConnectionResetError):
            with lock:
                counters["disconnects"] += 1
            self.close_connection = True

    def good_stream(self, split=True):
        self.start_stream()
        self.frame(b": keep-alive comment\r\n\r\n")
        self.event(chunk(role="assistant", content=""), split)
        for piece in ["Hello", " there", "! \u00e9t\u00e9"]:
            self.event(chunk(content=piece), split)
            time.sleep(0.01)
        self.event(chunk(finish="stop"), split)
        self.event({"id": "chatcmpl-test", "object": "chat.completion.chunk", "choices": [],
                    "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16,
                              "prompt_tokens_details": {"cached_tokens": 3}}}, split)
        self.event("[DONE]", split)
        self.frame(b"")

    def answer(self, model, n):
        if model == "good":
            self.good_stream()
        elif model == "drip":
            self.start_stream()
            self.event(chunk(role="assistant", content=""))
            for i in range(60):
                self.event(chunk(content="w%d " % i))
                time.sleep(0.05)
            self.event(chunk(finish="stop"))
            self.event("[DONE]")
            self.frame(b"")
        elif model == "slow":
            self.start_stream()
            self.event(chunk(content="Hel"))
            time.sleep(10)
            self.close_connection = True
        elif model in ("cut", "ended"):
            self.start_stream()
            self.event(chunk(content="par"))
            self.event(chunk(content="tial"))
            if model == "cut":
                self.wfile.write(b"40\r\ndata: {\"choi")  # a frame promised 64 bytes
                self.wfile.flush()
            else:
                self.frame(b"")
            self.close_connection = True
        elif model == "malformed":
            self.start_stream()
            self.event(chunk(content="fine"))
            self.event("{not json")
            self.event("[DONE]")
            self.frame(b"")
        elif model == "json":
            self.send_json(200, {"choices": [{"message": {"content": "hi"}}]})
        elif model == "429-once" and n == 1 or model == "429-long":
            wait = "1" if model == "429-once" else "3600"
            self.error(429, "too many requests", "rate_limit", [("Retry-After", wait)])
        elif model == "429-once":
            self.good_stream(split=False)
        elif model == "503-twice":
            if n <= 2:
                self.error(503, "loading", "unavailable")
            else:
                self.good_stream(split=False)
        elif model == "500":
            self.error(500, "boom", "internal_error")
        else:
            self.error(404, "The model `%s` does not exist." % model, "NotFoundError")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--api-key", default="")
    parser.add_argument("--lifetime", type=float, default=300)
    parser.add_argument("--port", type=int, default=0, help="0: the OS picks one")
    args = parser.parse_args()
    ThreadingHTTPServer.allow_reuse_address = True
    ThreadingHTTPServer.request_queue_size = 128  # listen backlog: 16+ clients connect at once
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.api_key = args.api_key
    print(server.server_address[1], flush=True)

    def stop_when_parent_goes():
        sys.stdin.read()
        os._exit(0)
    threading.Thread(target=stop_when_parent_goes, daemon=True).start()
    threading.Timer(args.lifetime, lambda: os._exit(0)).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
