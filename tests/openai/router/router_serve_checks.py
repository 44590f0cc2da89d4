"""ember-serve as a gateway (--upstream) in front of two ember-serve upstreams on the default
model, driven with the official openai SDK (the reference client: its stream parser and its
error types decide what a client sees). Checks: the gateway's models, key and request log;
least-outstanding balancing of 16 concurrent requests (counted by the upstreams' own /metrics);
one upstream killed during traffic (the streams it held end with an error after their text,
new requests all succeed on the other, the dead one is ejected); re-admission once it is back;
conversation-affine routing of 8-turn chats (turn k on the upstream of turn k-1) and the prompt
tokens the upstreams reused (cached_tokens), with affinity and with round robin."""
import argparse
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import openai

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ember_fleet import EmberServe  # noqa: E402

GATEWAY_KEY = "sk-gateway-test"
UPSTREAM_KEY = "sk-upstream-a"


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def client(server, key=GATEWAY_KEY):
    return openai.OpenAI(base_url=server.base_url, api_key=key, max_retries=0, timeout=120)


def ask(gateway, model, content, max_tokens=24, stream=True):
    """A greedy streamed answer through the SDK: (text, error message or None)."""
    text = ""
    try:
        for chunk in client(gateway).chat.completions.create(
                model=model, messages=[{"role": "user", "content": content}],
                max_tokens=max_tokens, temperature=0, stream=stream,
                extra_body={"ignore_eos": True}):
            if chunk.choices and chunk.choices[0].delta.content:
                text += chunk.choices[0].delta.content
        return text, None
    except openai.APIError as e:
        return text, str(e)


def routed(gateway, upstream):
    return int(gateway.metrics().get(f'ember_upstream_requests_total{{upstream="{upstream}"}}', 0))


def healthy(gateway, upstream):
    return gateway.metrics().get(f'ember_upstream_healthy{{upstream="{upstream}"}}') == 1


def wait_for(what, predicate, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def check_gateway_basics(gateway, model):
    ids = [m.id for m in client(gateway).models.list().data]
    check(ids == [model], f"/v1/models through the gateway lists {ids}, expected [{model}]")
    try:
        client(gateway, "sk-wrong").models.list()
        raise AssertionError("the gateway accepted a wrong key")
    except openai.AuthenticationError:
        pass
    try:
        client(gateway).chat.completions.create(model="no-such-model", max_tokens=1,
                                                messages=[{"role": "user", "content": "hi"}])
        raise AssertionError("an unknown model was served")
    except openai.NotFoundError as e:
        check("no-such-model" in str(e), f"the 404 does not name the model: {e}")
    print(f"gateway: models {ids}, wrong key 401, unknown model 404", flush=True)


def check_balancing(gateway, a, b, model):
    before = a.chat_requests(), b.chat_requests()
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda i: ask(gateway, model, f"Count to ten, attempt {i}.", 32),
                                range(16)))
    errors = [e for _, e in answers if e]
    check(not errors, f"requests failed: {errors[:3]}")
    counts = a.chat_requests() - before[0], b.chat_requests() - before[1]
    print(f"16 concurrent requests: a {counts[0]}, b {counts[1]} (upstreams' own /metrics)",
          flush=True)
    check(sum(counts) == 16, f"the upstreams answered {counts}, 16 in all expected")
    # Least outstanding with ties in turn gives 8/8 when all 16 are in flight together; one
    # request finishing before the last ones are routed may move one.
    check(abs(counts[0] - counts[1]) <= 2, f"unbalanced: {counts}")
    # The log line is written once the stream has been sent, so it may trail the client.
    def logged():
        with open(gateway.log_file) as f:
            return sum(1 for line in f if "endpoint=chat" in line and "status=200" in line)
    wait_for("16 answered chats in the gateway's request log", lambda: logged() >= 16, 10)

    # The gateway's usage meter counts routed requests: 16 x 32 generated tokens (ignore_eos).
    def metered():
        out = subprocess.run([gateway.args[0], "usage", "--usage-db", gateway.usage_db, "--json"],
                             capture_output=True, text=True, check=True).stdout
        rows = json.loads(out)
        return sum(r["requests"] for r in rows), sum(r["completion_tokens"] for r in rows)
    wait_for("the usage meter to count 16 requests", lambda: metered()[0] >= 16, 10)
    check(metered()[1] == 16 * 32, f"the usage meter counted {metered()} (requests, tokens)")


def check_kill_and_readmit(gateway, a, b, model):
    # Six long streams, then upstream a dies while all of them are streaming.
    streamed = threading.Semaphore(0)
    results = [None] * 6

    def long_stream(i):
        text, error = "", None
        try:
            for chunk in client(gateway).chat.completions.create(
                    model=model, messages=[{"role": "user", "content": f"Write a story {i}."}],
                    max_tokens=200, temperature=0, stream=True,
                    extra_body={"ignore_eos": True}):
                if chunk.choices and chunk.choices[0].delta.content:
                    if not text:
                        streamed.release()
                    text += chunk.choices[0].delta.content
        except openai.APIError as e:
            error = str(e)
        results[i] = (text, error)

    threads = [threading.Thread(target=long_stream, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for _ in range(6):
        check(streamed.acquire(timeout=60), "the streams did not start")
    on_a = int(gateway.metrics()['ember_upstream_outstanding_requests{upstream="a"}'])
    a.kill()
    # New requests right after the kill: those routed to a before it is ejected are refused
    # before anything streamed and go to b.
    with ThreadPoolExecutor(8) as pool:
        fresh = list(pool.map(lambda i: ask(gateway, model, f"Say hello {i}.", 8), range(8)))
    for t in threads:
        t.join(timeout=120)
    failed = [r for r in results if r[1]]
    print(f"kill: {on_a} of 6 streams were on a; {len(failed)} ended with an error, "
          f"{sum(1 for _, e in fresh if not e)}/8 new requests answered", flush=True)
    check(all(not e for _, e in fresh), f"new requests failed: {[e for _, e in fresh if e][:3]}")
    check(len(failed) == on_a, f"{len(failed)} streams failed, {on_a} were on the killed upstream")
    check(all(text for text, _ in failed), "a failed stream lost the text that had arrived")
    wait_for("a to be ejected", lambda: not healthy(gateway, "a"), 30)
    check(gateway.metrics()['ember_upstream_ejections_total{upstream="a"}'] >= 1, "no ejection")

    a.start()
    wait_for("a to be re-admitted", lambda: healthy(gateway, "a"), 60)
    before = routed(gateway, "a")
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda i: ask(gateway, model, f"Name a colour {i}.", 16), range(4)))
    check(all(not e for _, e in answers), "requests failed after re-admission")
    check(routed(gateway, "a") > before, "the re-admitted upstream got no requests")
    print(f"re-admitted: a took {routed(gateway, 'a') - before} of 4 requests", flush=True)


TOPICS = ["the garden", "a train trip", "the office move", "a birthday party", "the old bike",
          "a rainy week", "the new phone", "a cooking class"]


def replay_chats(gateway, a, b, model, tag, chats=3, turns=8):
    """`chats` conversations, turns interleaved; each turn's answer is the next turn's
    history. Three chats over two upstreams: a strict alternation moves every chat each turn. Returns (turns that landed on the previous turn's upstream, turns after the
    first, cached prompt tokens summed over all turns)."""
    histories = [[{"role": "system", "content": "You are a helpful assistant. Keep answers short."}]
                 for _ in range(chats)]
    where = [None] * chats
    same = later = cached = 0
    for turn in range(turns):
        for c in range(chats):
            history = histories[c]
            history.append({"role": "user", "content":
                            f"({tag} chat {c}) Tell me one more thing about {TOPICS[turn]} and "
                            f"why it matters to people who live in a small town near the sea."})
            before = a.chat_requests(), b.chat_requests()
            answer = client(gateway).chat.completions.create(
                model=model, messages=history, max_tokens=16, temperature=0)
            after = a.chat_requests(), b.chat_requests()
            landed = "a" if after[0] > before[0] else "b" if after[1] > before[1] else None
            check(landed and sum(after) - sum(before) == 1, f"turn {turn + 1} landed {landed}")
            if turn > 0:
                later += 1
                same += landed == where[c]
            where[c] = landed
            details = answer.usage.prompt_tokens_details
            cached += details.cached_tokens if details else 0
            history.append({"role": "assistant", "content": answer.choices[0].message.content})
    return same, later, cached


def check_affinity(serve, workdir, gateway, a, b, model, specs):
    same, later, cached = replay_chats(gateway, a, b, model, "affine")
    round_robin = EmberServe(serve, workdir, "gateway-rr", upstreams=specs, key=GATEWAY_KEY,
                             extra=["--health-interval", "200", "--no-affinity"]).start()
    try:
        rr_same, rr_later, rr_cached = replay_chats(round_robin, a, b, model, "round-robin")
    finally:
        round_robin.stop()
    print(f"8-turn chats x3: affinity: {same}/{later} turns on the previous turn's upstream, "
          f"reused prompt tokens {cached}; round robin: {rr_same}/{rr_later}, reused {rr_cached}",
          flush=True)
    check(same == later, f"with affinity only {same} of {later} turns stayed on their upstream")
    check(rr_same < rr_later, "round robin kept every turn in place: the comparison shows nothing")
    check(cached > rr_cached, f"affinity reused {cached} prompt tokens, round robin {rr_cached}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    key_file = os.path.join(args.workdir, "upstream-a.key")
    with open(key_file, "w") as f:
        f.write(UPSTREAM_KEY + "\n")
    started = time.time()
    a = EmberServe(args.serve, args.workdir, "upstream-a", model=args.model, key=UPSTREAM_KEY)
    b = EmberServe(args.serve, args.workdir, "upstream-b", model=args.model)
    servers = [a, b]
    try:
        a.start(wait=False), b.start(wait=False)
        a.wait_healthy(), b.wait_healthy()
        specs = [f"a={a.base_url},{key_file}", f"b={b.base_url}"]
        gateway = EmberServe(args.serve, args.workdir, "gateway", upstreams=specs,
                             key=GATEWAY_KEY, extra=["--health-interval", "200"]).start()
        servers.append(gateway)
        model = client(a, UPSTREAM_KEY).models.list().data[0].id
        check_gateway_basics(gateway, model)
        check_balancing(gateway, a, b, model)
        check_affinity(args.serve, args.workdir, gateway, a, b, model, specs)
        check_kill_and_readmit(gateway, a, b, model)
    finally:
        for s in reversed(servers):
            s.stop()
    print(f"router checks passed in {time.time() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
