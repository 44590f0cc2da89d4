"""Helpers for serve_checks.py and its parts: an ember-serve process on a free loopback port, raw
HTTP, SSE reading, /metrics parsing, the OpenAPI schemas as jsonschema validators, and a greedy
one-question chat request's arguments."""
import json
import os
import signal
import socket
import subprocess
import time

import httpx
import jsonschema
import openai
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _nullable_to_2020(node):
    """The spec mixes OpenAPI 3.0's `nullable: true` into 3.1 schemas; JSON Schema spells it
    as a "null" type (or a null in the enum)."""
    if isinstance(node, list):
        return [_nullable_to_2020(n) for n in node]
    if not isinstance(node, dict):
        return node
    node = {k: _nullable_to_2020(v) for k, v in node.items()}
    if node.pop("nullable", False):
        if isinstance(node.get("type"), str):
            node["type"] = [node["type"], "null"]
            if "enum" in node:
                node["enum"] = list(node["enum"]) + [None]
        elif "$ref" in node or "anyOf" in node or "allOf" in node or "oneOf" in node:
            node = {"anyOf": [node, {"type": "null"}]}
    return node


class Schemas:
    def __init__(self, spec_path):
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        with open(spec_path) as f:
            spec = _nullable_to_2020(yaml.load(f, Loader=loader))
        resource = Resource.from_contents(spec, default_specification=DRAFT202012)
        self.registry = Registry().with_resource("urn:openai", resource)
        self.validated = 0

    def accepts(self, name, instance):
        """Whether the spec's schema `name` allows `instance` (a request the spec allows)."""
        schema = {"$ref": f"urn:openai#/components/schemas/{name}"}
        validator = jsonschema.Draft202012Validator(schema, registry=self.registry)
        return next(validator.iter_errors(instance), None) is None

    def validate(self, name, instance, what):
        schema = {"$ref": f"urn:openai#/components/schemas/{name}"}
        validator = jsonschema.Draft202012Validator(schema, registry=self.registry)
        errors = list(validator.iter_errors(instance))
        self.validated += 1
        if errors:
            raise AssertionError(f"{what} does not match {name}: {errors[0].message} at "
                                 f"{list(errors[0].absolute_path)}\n{json.dumps(instance)[:800]}")


def raw_request(port, method, path, body=None, headers=None, host=None):
    """One HTTP/1.1 request on a fresh connection; returns (status, body, headers). A server
    that answers early (413) and closes is fine: the answer is read after the failed send."""
    headers = dict(headers or {})
    lines = [f"{method} {path} HTTP/1.1"]
    if not any(k.lower() == "host" for k in headers):
        lines.append(f"Host: {host or '127.0.0.1'}:{port}")
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines.append("Connection: close")
    if body is not None:
        lines.append("Content-Type: application/json")
        lines.append(f"Content-Length: {len(body)}")
    data = ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        try:
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        received = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            received += chunk
    finally:
        sock.close()
    if not received:
        return 0, "", {}
    head, _, rest = received.partition(b"\r\n\r\n")
    head_lines = head.decode("latin-1").split("\r\n")
    status = int(head_lines[0].split()[1])
    hdrs = {}
    for line in head_lines[1:]:
        k, _, v = line.partition(":")
        hdrs[k.strip()] = v.strip()
    return status, rest.decode("utf-8", "replace"), hdrs


def resident_kib(pid):
    """The process's resident set (VmRSS in /proc/<pid>/status, in KiB)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for process {pid}")


def sanitized(pid):
    """The sanitizer runtime the process runs under ("libasan", "libtsan"), or None."""
    with open(f"/proc/{pid}/maps") as f:
        maps = f.read()
    return next((lib for lib in ("libasan", "libtsan", "libhwasan") if lib in maps), None)


def metric(port, key, name):
    """A sample's value from /metrics (name may carry its labels)."""
    text = httpx.get(f"http://127.0.0.1:{port}/metrics",
                     headers={"Authorization": "Bearer " + key}).text
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{name} not in /metrics")


class Server:
    """ember-serve on a free loopback port with the given model; a context manager."""

    def __init__(self, serve, model_path, workdir, name, key, parallel=4, queue=64, fresh=False,
                 request_timeout=None, extra_args=(), context=1024):
        self.serve, self.model_path, self.key = serve, model_path, key
        self.port = free_port()
        self.usage_db = os.path.join(workdir, f"{name}-usage.sqlite")
        self.log_file = os.path.join(workdir, f"{name}.log")
        if fresh:
            for path in (self.usage_db, self.log_file):
                if os.path.exists(path):
                    os.remove(path)
        self.args = [serve, "--model", model_path, "--port", str(self.port), "--api-key", key,
                     "--parallel", str(parallel), "--queue", str(queue), "--context", str(context),
                     "--threads", "2", "--usage-db", self.usage_db, "--log-file", self.log_file]
        if request_timeout:
            self.args += ["--request-timeout", str(request_timeout)]
        self.args += list(extra_args)

    def __enter__(self):
        self.process = subprocess.Popen(self.args)
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"ember-serve exited with {self.process.returncode}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            raise AssertionError("ember-serve did not become healthy")
        # Under a sanitizer the server runs several times slower (and CI runs two such tests at
        # once): every wait on it is stretched by this factor.
        self.patience = 4 if sanitized(self.process.pid) else 1
        self.model_id = self.client(self.key).models.list().data[0].id
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=30)

    def client(self, key):
        return openai.OpenAI(base_url=f"http://127.0.0.1:{self.port}/v1", api_key=key,
                             max_retries=0, timeout=120 * self.patience)

    def iter_sse(self, path, key, body, timeout=None):
        """Yields the data payloads of a streamed response as they arrive ("[DONE]" included);
        raises httpx.HTTPError when the connection fails or closes early."""
        with httpx.stream("POST", f"http://127.0.0.1:{self.port}{path}", json=body,
                          timeout=timeout or 120 * self.patience,
                          headers={"Authorization": "Bearer " + key}) as response:
            if response.status_code != 200:
                raise AssertionError(f"stream answered {response.status_code}: {response.read()}")
            buffer = ""
            for text in response.iter_text():
                buffer += text
                while "\n\n" in buffer:
                    frame, buffer = buffer.split("\n\n", 1)
                    assert frame.startswith("data: "), frame
                    yield frame[len("data: "):]

    def sse(self, path, key, body):
        """The data payloads of a streamed response, in order ("[DONE]" included)."""
        return list(self.iter_sse(path, key, body))

    def status_of_stream(self, key, body):
        with httpx.stream("POST", f"http://127.0.0.1:{self.port}/v1/chat/completions", json=body,
                          timeout=120 * self.patience,
                          headers={"Authorization": "Bearer " + key}) as response:
            response.read()
            return response.status_code


def chat_args(model, question, **extra):  # greedy, so that answers can be compared
    args = dict(model=model, messages=[{"role": "user", "content": question}],
                temperature=0, max_tokens=24)
    args.update(extra)
    return args
