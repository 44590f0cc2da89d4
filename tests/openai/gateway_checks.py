"""ember-serve's gateway against raw HTTP and the official `openai` SDK: one credential per request,
the loopback default bind and the refusal of a wider one without a key, per-key request and
token rates refused before any compute, and model names that are paths to files never opened.
References: RFC 9110 (Authorization is a singleton field, 11.6.2 and 5.3; 429 with Retry-After
from RFC 6585 4 and RFC 9110 10.2.3), the OpenAI API reference (401 invalid_api_key, 429
rate_limit_exceeded, 404 model_not_found; error bodies validated against the OpenAPI file's
ErrorResponse), the SDK's own exception types, Linux's /proc/net/tcp and fifo(7)."""
import errno
import fcntl
import json
import math
import os
import socket
import struct
import subprocess
import time

import openai

from serve_support import Server, metric


def raw_lines(port, method, path, header_lines, body=None):
    """A request whose header lines are given as a list (so a field may repeat)."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close",
             *header_lines]
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    data = ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, rest = received.partition(b"\r\n\r\n")
    return int(head.split()[1]), rest.decode("utf-8", "replace")


def check_one_credential(server, schemas, key, check):
    """Two keys in one request are refused with 401 whichever comes first (the same answer the
    OpenAI API gives any key it does not accept), so a proxy reading the first and the server
    another can never disagree about who is asking."""
    body = json.dumps({"model": server.model_id, "prompt": "Hi", "max_tokens": 1}).encode()
    right, wrong = "Authorization: Bearer " + key, "Authorization: Bearer " + key[:-1] + "x"
    cases = [([right, wrong], 401), ([wrong, right], 401), ([right, right], 401),
             ([right, "X-Api-Key: " + key + "x"], 401), (["X-Api-Key: " + key] * 2, 401),
             (["X-Api-Key: " + key, "X-Api-Key: nope"], 401),
             ([right, "X-Api-Key: " + key], 200), ([right], 200)]
    for method, path in (("GET", "/v1/models"), ("POST", "/v1/completions"), ("GET", "/metrics")):
        for headers, wanted in cases:
            got, text = raw_lines(server.port, method, path, headers,
                                  body if method == "POST" else None)
            check(got == wanted, f"{method} {path} with {headers}: {got}, wanted {wanted}")
            if wanted == 401 and got == 401:
                parsed = json.loads(text)
                schemas.validate("ErrorResponse", parsed, "two keys")
                check(parsed["error"]["code"] == "invalid_api_key", f"two keys: {parsed}")


def listening_addresses(port):
    """The local addresses of the LISTEN sockets on `port`, from /proc/net/tcp and tcp6."""
    found = []
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        if not os.path.exists(table):
            continue
        for line in open(table).read().splitlines()[1:]:
            fields = line.split()
            address, _, hex_port = fields[1].partition(":")
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A: TCP_LISTEN
                raw = bytes.fromhex(address)
                if width == 8:  # one little-endian 32-bit word
                    found.append(socket.inet_ntop(socket.AF_INET, raw[::-1]))
                else:  # four little-endian 32-bit words
                    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
                    found.append(socket.inet_ntop(socket.AF_INET6, words))
    return found


def other_local_addresses():
    """This machine's IPv4 addresses outside 127.0.0.0/8 (SIOCGIFADDR per interface)."""
    found = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _, name in socket.if_nameindex():
            try:
                packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))
            except OSError:
                continue  # no IPv4 address on it
            address = socket.inet_ntoa(packed[20:24])
            if not address.startswith("127."):
                found.append(address)
    return found


def check_bind(serve, model_path, server, check):
    # The default (no --host): loopback only, as ember-serve --help states.
    addresses = listening_addresses(server.port)
    check(addresses and all(a.startswith("127.") or a == "::1" for a in addresses),
          f"ember-serve listens on loopback by default: {addresses}")
    others = other_local_addresses()
    for address in others:  # reachable from the network: must not answer there
        try:
            socket.create_connection((address, server.port), timeout=2).close()
            check(False, f"the default bind answers on {address}")
        except OSError:
            pass
    print(f"bind: listening on {addresses}; refused on {others or 'no other local address'}",
          flush=True)
    # A wider bind without a key is refused at start, before the model loads, with the reason.
    env = {k: v for k, v in os.environ.items() if k != "EMBER_API_KEY"}
    for host in ("0.0.0.0", "::", *others[:1], "127.0.0.1.example.com"):
        started = time.time()
        run = subprocess.run([serve, "--model", model_path, "--host", host, "--port", "0"],
                             capture_output=True, text=True, env=env, timeout=30)
        check(run.returncode == 2 and "without an API key" in run.stderr and host in run.stderr,
              f"--host {host} without a key refused: {run.returncode} {run.stderr.strip()!r}")
        check(time.time() - started < 10, f"--host {host} refused at once")


def check_rate_limits(serve, model_path, workdir, schemas, key, check):
    """--rpm and --tpm: a refused request gets 429 rate_limit_exceeded with Retry-After before
    anything is computed (/metrics' token counters do not move), and another key is untouched."""
    other = key + "-other"
    keys_file = os.path.join(workdir, "rate-keys.txt")
    with open(keys_file, "w") as f:
        f.write(other + "\n")
    def chat(model, **extra):
        return {"model": model, "messages": [{"role": "user", "content": "Say hi."}],
                "temperature": 0, "max_tokens": 2, **extra}
    computed = ("ember_prompt_tokens_total", "ember_generated_tokens_total")

    with Server(serve, model_path, workdir, "rpm", key, parallel=2, queue=8, fresh=True,
                extra_args=["--rpm", "3", "--api-key-file", keys_file]) as server:
        client, second = server.client(key), server.client(other)
        for _ in range(3):
            client.chat.completions.create(**chat(server.model_id))
        before = [metric(server.port, key, name) for name in computed]
        for i in range(3):  # the bucket holds 3 and refills one each 20 s: these are refused
            try:
                raw = client.chat.completions.with_raw_response.create(**chat(server.model_id))
                check(False, f"request {4 + i} within the minute refused ({raw.http_response.status_code})")
            except openai.RateLimitError as e:
                retry = e.response.headers.get("retry-after", "")
                # Empty bucket at 3 per minute: the next unit in at most 20 s.
                check(retry.isdigit() and 1 <= int(retry) <= 20, f"rpm Retry-After {retry!r}")
                schemas.validate("ErrorResponse", e.response.json(), "rpm 429")
                check(e.body.get("code") == "rate_limit_exceeded", f"rpm code {e.body}")
        check([metric(server.port, key, name) for name in computed] == before,
              "refused requests computed nothing (prompt and generated token counters unchanged)")
        check(metric(server.port, key, 'ember_rejected_total{reason="rate_limit"}') == 3,
              "3 rpm refusals counted")
        answer = second.chat.completions.create(**chat(server.model_id))
        check(answer.usage.completion_tokens > 0, "another key is not limited")

    with Server(serve, model_path, workdir, "tpm", key, parallel=2, queue=8, fresh=True,
                extra_args=["--tpm", "60", "--api-key-file", keys_file]) as server:
        client, second = server.client(key), server.client(other)
        # A full bucket admits one request even when it costs more than the bucket holds; the
        # cost (prompt + completion) is charged when it ends, leaving the bucket in debt.
        first = client.chat.completions.create(**chat(server.model_id, max_tokens=40),
                                               extra_body={"ignore_eos": True})
        cost = first.usage.prompt_tokens + first.usage.completion_tokens
        check(first.usage.completion_tokens == 40 and cost > 60, f"the first request costs {cost}")
        charged = time.time()
        before = [metric(server.port, key, name) for name in computed]
        try:
            client.chat.completions.create(**chat(server.model_id))
            check(False, "a request while the token bucket is in debt is refused")
        except openai.RateLimitError as e:
            # Hand-computed: 60 - cost tokens left, refilled at 1 a second -> cost - 60 seconds.
            wanted = cost - 60 - (time.time() - charged)
            retry = e.response.headers.get("retry-after", "")
            check(retry.isdigit() and math.ceil(wanted) - 1 <= int(retry) <= math.ceil(wanted) + 1,
                  f"tpm Retry-After {retry!r}, wanted about {wanted:.1f}")
            check(e.body.get("code") == "rate_limit_exceeded", f"tpm code {e.body}")
        check([metric(server.port, key, name) for name in computed] == before,
              "the token-refused request computed nothing")
        check(metric(server.port, key, 'ember_rejected_total{reason="tokens"}') == 1,
              "1 tpm refusal counted")
        check(second.chat.completions.create(**chat(server.model_id)).usage.completion_tokens > 0,
              "another key's tokens are its own")


def check_path_models(server, workdir, key, check):
    """Model names that are symlinks (and the files behind them) outside any model folder: each
    a 404, and the file is never opened. The target is a FIFO: opening it to read would block
    the request (no 404 in time), and a non-blocking open to write fails with ENXIO only when no
    process has it open for reading (fifo(7))."""
    outside = os.path.join(workdir, "outside")
    links = os.path.join(workdir, "links")
    os.makedirs(outside, exist_ok=True)
    os.makedirs(links, exist_ok=True)
    fifo = os.path.join(outside, "secret.gguf")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    names = []
    for name, target in (("link.gguf", fifo), (server.model_id + ".gguf", fifo),
                         ("model-dir", outside)):
        path = os.path.join(links, name)
        if os.path.lexists(path):
            os.remove(path)
        os.symlink(target, path)
        names += [path, name]
    names += [fifo, os.path.relpath(fifo), "file://" + fifo, server.model_id + "/../" + "link.gguf"]
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{server.port}/v1", api_key=key,
                           max_retries=0, timeout=10)
    for name in names:
        try:
            client.chat.completions.create(model=name, max_tokens=1,
                                           messages=[{"role": "user", "content": "hi"}])
            check(False, f"model {name!r} refused")
        except openai.NotFoundError as e:
            check(e.body.get("code") == "model_not_found", f"model {name!r}: {e.body}")
        except openai.APITimeoutError:
            check(False, f"model {name!r}: no answer in 10 s (the FIFO was opened?)")
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        check(False, "the FIFO outside the model folders has a reader")
    except OSError as e:
        check(e.errno == errno.ENXIO, f"FIFO open for writing: {e}")
    opened = [os.readlink(f"/proc/{server.process.pid}/fd/{fd}")
              for fd in os.listdir(f"/proc/{server.process.pid}/fd")]
    check(not any(outside in target or links in target for target in opened),
          f"no descriptor of ember-serve points outside: {[t for t in opened if workdir in t]}")
