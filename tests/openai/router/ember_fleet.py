"""ember-serve processes for the router checks and the router benchmark: upstreams on the
default model and gateways (--upstream) in front of them, on free loopback ports. Every process
gets SIGTERM when the Python process that started it dies (PR_SET_PDEATHSIG), so nothing
outlives a test or benchmark that crashed or was killed. Standard library only."""
import ctypes
import http.client
import json
import os
import signal
import socket
import subprocess
import time

_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(port, path, key=None, timeout=10):
    """(status, body text); status 0 when nothing answers."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Authorization": "Bearer " + key} if key else {})
        response = conn.getresponse()
        return response.status, response.read().decode()
    except OSError:
        return 0, ""
    finally:
        conn.close()


class EmberServe:
    """One ember-serve process. `upstreams` is a list of --upstream specs (a gateway)."""

    def __init__(self, serve, workdir, name, model=None, upstreams=(), key=None, port=None,
                 extra=()):
        self.name, self.key = name, key
        self.port = port or free_port()
        self.log_file = os.path.join(workdir, f"{name}.log")
        self.usage_db = os.path.join(workdir, f"{name}-usage.sqlite")
        for stale in (self.usage_db, self.log_file):  # counts and lines of an earlier run
            if os.path.exists(stale):
                os.remove(stale)
        self.args = [serve, "--port", str(self.port), "--usage-db", self.usage_db,
                     "--log-file", self.log_file]
        if model:
            self.args += ["--model", model, "--threads", "1", "--context", "4096",
                          "--parallel", "8"]
        for spec in upstreams:
            self.args += ["--upstream", spec]
        if key:
            self.args += ["--api-key", key]
        self.args += list(extra)
        self.stderr = open(os.path.join(workdir, f"{name}.stderr"), "ab")
        self.process = None

    def start(self, wait=True):
        self.process = subprocess.Popen(self.args, stderr=self.stderr,
                                        preexec_fn=_die_with_parent)
        if wait:
            self.wait_healthy()
        return self

    def wait_healthy(self, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.process.returncode}")
            if http_get(self.port, "/health")[0] == 200:
                return
            time.sleep(0.05)
        raise AssertionError(f"{self.name} did not become healthy in {timeout} s")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def kill(self):
        self.process.kill()
        self.process.wait()

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}/v1"

    def metrics(self):
        """{sample name with labels: value} from /metrics."""
        status, text = http_get(self.port, "/metrics", self.key)
        if status != 200:
            raise AssertionError(f"{self.name} /metrics answered {status}")
        samples = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                samples[name] = float(value)
        return samples

    def chat_requests(self):
        """Chat completions this server answered with 200 (its own request counter)."""
        return int(self.metrics().get('ember_requests_total{endpoint="chat",status="200"}', 0))


def stream_chat(port, key, body, on_first_text=None, timeout=120):
    """A streamed chat completion over a raw connection, timed on the client: returns
    {"text", "ttft_ms", "usage", "error"}. TTFT is from sending the request to the first chunk
    that carries content (the role-only first chunk does not count)."""
    body = dict(body, stream=True, stream_options={"include_usage": True})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = "Bearer " + key
    out = {"text": "", "ttft_ms": None, "usage": None, "error": None}
    started = time.perf_counter()
    try:
        conn.request("POST", "/v1/chat/completions", json.dumps(body), headers)
        response = conn.getresponse()
        if response.status != 200:
            out["error"] = f"HTTP {response.status}: {response.read().decode()[:300]}"
            return out
        buffer = b""
        while True:
            chunk = response.read1(65536)
            if not chunk:
                break
            buffer += chunk
            while b"\n\n" in buffer:
                frame, buffer = buffer.split(b"\n\n", 1)
                data = frame.decode().removeprefix("data: ")
                if data == "[DONE]":
                    return out
                event = json.loads(data)
                if "error" in event:
                    out["error"] = event["error"].get("message", str(event["error"]))
                    return out
                if event.get("usage"):
                    out["usage"] = event["usage"]
                for choice in event.get("choices", []):
                    piece = (choice.get("delta") or {}).get("content")
                    if piece:
                        if out["ttft_ms"] is None:
                            out["ttft_ms"] = (time.perf_counter() - started) * 1000
                            if on_first_text:
                                on_first_text()
                        out["text"] += piece
        out["error"] = out["error"] or "the stream ended without [DONE]"
    except OSError as e:
        out["error"] = f"connection: {e}"
    finally:
        conn.close()
    return out
