"""Hostile HTTP framing against ember-serve: a client sending a byte a second, an oversized
header line, 10,000 header fields, a 100 KB URL, contradictory Content-Length headers, and a
chunked body over the body limit. Reference: the statuses HTTP defines for them (RFC 9110: 408,
413, 414, 431, 400) and the OpenAI error body ({"error": {"message", "type", "param", "code"}},
checked against the spec's ErrorResponse); after each one the server still answers."""
import json
import socket
import threading
import time

from serve_support import raw_request


def raw_exchange(port, data, timeout=30):
    """Sends bytes on a fresh connection and reads until the server closes it; returns
    (status, body, closed_by_server)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    received = b""
    closed = False
    try:
        try:
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                closed = True
                break
            except socket.timeout:
                break
            if not chunk:
                closed = True
                break
            received += chunk
    finally:
        sock.close()
    head, _, body = received.partition(b"\r\n\r\n")
    status = int(head.split()[1]) if head else 0
    return status, body.decode("utf-8", "replace"), closed


def first_body(text):
    """The first JSON value of a body (a 408 may follow the answer on an idle connection)."""
    return json.JSONDecoder().raw_decode(text)[0]


def check_limits(server, schemas, key, check, request_timeout):
    port = server.port
    auth = f"Authorization: Bearer {key}\r\n"
    host = f"Host: 127.0.0.1:{port}\r\n"

    def expect(what, status, got, body, wanted_code=None):
        check(got == status, f"{what}: status {got}, wanted {status}: {body[:200]!r}")
        try:
            error = first_body(body)
            schemas.validate("ErrorResponse", error, what)
            if wanted_code:
                check(error["error"]["code"] == wanted_code, f"{what}: code {error['error']['code']}")
        except (ValueError, AssertionError) as e:
            check(False, f"{what}: not an OpenAI error body: {e}")
        check(raw_request(port, "GET", "/health")[0] == 200, f"{what}: the server lives on")

    # A byte a second: cut after the request deadline with a 408, the connection closed. Two at
    # once, so that neither holds the other's thread.
    results = []

    def slow_client():
        started = time.time()
        sock = socket.create_connection(("127.0.0.1", port), timeout=request_timeout + 10)
        sock.settimeout(1.0)
        received = b""
        closed = False
        for byte in b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 999":
            try:
                sock.send(bytes([byte]))
                chunk = sock.recv(4096)
                if not chunk:
                    closed = True
                    break
                received += chunk
            except socket.timeout:
                continue
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
        sock.close()
        results.append((time.time() - started, received, closed))

    threads = [threading.Thread(target=slow_client) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for elapsed, received, closed in results:
        head, _, body = received.partition(b"\r\n\r\n")
        check(closed and elapsed < request_timeout + 3,
              f"slow client cut after {elapsed:.1f} s (deadline {request_timeout} s)")
        expect("slow client", 408, int(head.split()[1]) if head else 0, body.decode(),
               "request_timeout")

    # One 64 KiB header line (httplib's line limit is 8 KiB).
    got, body, _ = raw_exchange(port, (f"GET /v1/models HTTP/1.1\r\n{host}{auth}X-Big: " + "a" * 65536 +
                                       "\r\nConnection: close\r\n\r\n").encode())
    expect("64 KiB header", 431, got, body)
    # 10,000 header fields.
    fields = "".join(f"X-Field-{i}: v\r\n" for i in range(10000))
    got, body, _ = raw_exchange(port, f"GET /v1/models HTTP/1.1\r\n{host}{auth}{fields}Connection: close\r\n\r\n".encode())
    expect("10,000 headers", 431, got, body)
    # A 100 KB URL.
    got, body, _ = raw_exchange(port, (f"GET /v1/models?q=" + "a" * 100000 +
                                       f" HTTP/1.1\r\n{host}{auth}Connection: close\r\n\r\n").encode())
    expect("100 KB URL", 414, got, body)

    # Contradictory Content-Length, followed by bytes that would be a second request if the
    # server guessed a length: one 400, then the connection is closed (nothing smuggled).
    payload = json.dumps({"model": server.model_id, "prompt": "hi", "max_tokens": 1}).encode()
    smuggled = f"GET /v1/models HTTP/1.1\r\n{host}{auth}\r\n".encode()
    got, body, closed = raw_exchange(port, (
        f"POST /v1/completions HTTP/1.1\r\n{host}{auth}Content-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nContent-Length: 5\r\n\r\n").encode() + payload + smuggled,
        timeout=request_timeout + 5)
    expect("contradictory Content-Length", 400, got, body, "ambiguous_body_length")
    check(closed and body.count('"error"') == 1 and '"object":"list"' not in body,
          f"contradictory Content-Length closes the connection: {body[:300]!r}")
    got, body, closed = raw_exchange(port, (
        f"POST /v1/completions HTTP/1.1\r\n{host}{auth}Content-Length: {len(payload)}\r\n"
        f"Transfer-Encoding: chunked\r\n\r\n").encode() + payload, timeout=request_timeout + 5)
    expect("Content-Length with chunked", 400, got, body, "ambiguous_body_length")

    # A chunked body past the 8 MiB limit (httplib applies its own limit to Content-Length only).
    chunk = b"%x\r\n%s\r\n" % (65536, b"a" * 65536)
    got, body, closed = raw_exchange(port, (
        f"POST /v1/chat/completions HTTP/1.1\r\n{host}{auth}Content-Type: application/json\r\n"
        f"Transfer-Encoding: chunked\r\n\r\n").encode() + chunk * 160 + b"0\r\n\r\n")
    expect("chunked body over the limit", 413, got, body)
    check(closed, "the connection is closed after the 413")
    # A chunked body under the limit is served.
    small = json.dumps({"model": server.model_id, "messages": [{"role": "user", "content": "hi"}],
                        "max_tokens": 2, "temperature": 0}).encode()
    got, body, _ = raw_exchange(port, (
        f"POST /v1/chat/completions HTTP/1.1\r\n{host}{auth}Content-Type: application/json\r\n"
        f"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").encode() +
        b"%x\r\n%s\r\n0\r\n\r\n" % (len(small), small))
    check(got == 200 and first_body(body)["object"] == "chat.completion",
          f"a small chunked body is served: {got} {body[:200]!r}")
