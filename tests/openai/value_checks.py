"""Every numeric request field at the extremes, every field the codec acts on with each JSON
type, unknown fields, and a run of over-context requests. Reference: the OpenAI OpenAPI file's request schemas (CreateChatCompletionRequest,
CreateCompletionRequest: types, minimum/maximum, and no `additionalProperties: false`, so a field
the API does not define is allowed and, as the OpenAI API and SDK treat `extra_body`, ignored).
The rule checked: a value the spec refuses gets a 400 naming its field; a value the spec allows
gets a 200 whose body matches the spec, or a 400 naming its field where Ember is stricter (its
documented limits: seed, n, max_tokens past the context...); never a 5xx or a dropped connection.
NaN is not JSON (RFC 8259 6): a 400 whatever the field."""
import json

from serve_support import raw_request

VALUES = (0, -1, 1.5, 1e308, 2 ** 64)
# The spec's numeric fields, and Ember's own sampling extensions (no spec: 200 or a 400 naming them).
CHAT_FIELDS = ("temperature", "top_p", "n", "max_tokens", "max_completion_tokens",
               "frequency_penalty", "presence_penalty", "seed", "top_logprobs", "logit_bias")
COMPLETION_FIELDS = ("temperature", "top_p", "n", "max_tokens", "frequency_penalty",
                     "presence_penalty", "seed", "logprobs", "best_of", "logit_bias")
EXTENSIONS = ("top_k", "min_p", "repeat_penalty")


def check_numeric_extremes(server, schemas, key, check):
    auth = {"Authorization": "Bearer " + key}
    bases = {
        "/v1/chat/completions": ({"model": server.model_id, "max_tokens": 1, "temperature": 0,
                                  "messages": [{"role": "user", "content": "hi"}]},
                                 "CreateChatCompletionRequest", "CreateChatCompletionResponse",
                                 CHAT_FIELDS),
        "/v1/completions": ({"model": server.model_id, "prompt": "Hi", "max_tokens": 1,
                             "temperature": 0}, "CreateCompletionRequest",
                            "CreateCompletionResponse", COMPLETION_FIELDS)}
    tried = 0
    for path, (base, request_schema, response_schema, fields) in bases.items():
        for field in fields + EXTENSIONS:
            for value in VALUES:
                body = dict(base)
                body[field] = {"15": value} if field == "logit_bias" else value
                if field == "top_logprobs":
                    body["logprobs"] = True
                allowed = field in EXTENSIONS or schemas.accepts(request_schema, body)
                status, text, _ = raw_request(server.port, "POST", path, json.dumps(body).encode(),
                                              auth)
                tried += 1
                what = f"{path} {field}={value!r} (spec {'allows' if allowed else 'refuses'})"
                if status == 200 and allowed:
                    schemas.validate(response_schema, json.loads(text), what)
                    continue
                check(status == 400, f"{what}: status {status}: {text[:200]!r}")
                if status == 400:
                    error = json.loads(text)["error"]
                    check((error.get("param") or "").startswith(field),
                          f"{what}: the 400 names {error.get('param')!r}: {error['message']}")
            # NaN: not JSON at all.
            body = json.dumps({**base, field: float("nan")}).encode()
            status, _, _ = raw_request(server.port, "POST", path, body, auth)
            tried += 1
            check(status == 400, f"{path} {field}=NaN: status {status}")
    print(f"numeric extremes: {tried} requests", flush=True)


def check_unknown_fields(server, key, check):
    """Unknown fields change nothing: the greedy answer is the same with and without them."""
    auth = {"Authorization": "Bearer " + key}
    unknown = {"not_a_parameter": {"deep": [[[1e308]]]}, "x_ember_unknown": "NaN",
               "Temperature": 99, "reasoning_effort_xyz": None}
    for path, base in (("/v1/chat/completions", {"model": server.model_id, "max_tokens": 8,
                        "temperature": 0, "messages": [{"role": "user", "content": "Say hi."}]}),
                       ("/v1/completions", {"model": server.model_id, "prompt": "The sky is",
                                            "max_tokens": 8, "temperature": 0})):
        answers = []
        for body in (base, {**base, **unknown}):
            status, text, _ = raw_request(server.port, "POST", path, json.dumps(body).encode(), auth)
            check(status == 200, f"{path} with unknown fields: {status} {text[:200]!r}")
            choice = json.loads(text)["choices"][0] if status == 200 else {}
            answers.append(choice.get("message", {}).get("content", choice.get("text")))
        check(answers[0] == answers[1] and answers[0], f"{path}: unknown fields ignored {answers}")


def check_over_context_run(server, key, check, count=100):
    """count requests past the context in a row (each a 400 naming the problem, refused before
    any step), then a valid one answers at once."""
    auth = {"Authorization": "Bearer " + key}
    chat = "/v1/chat/completions"
    over = json.dumps({"model": server.model_id, "max_tokens": 2,
                       "messages": [{"role": "user", "content": "word " * 3000}]}).encode()
    statuses = [raw_request(server.port, "POST", chat, over, auth)[0] for _ in range(count)]
    check(statuses == [400] * count, f"{count} over-context requests each a 400: "
          f"{sorted(set(statuses))}")
    good = json.dumps({"model": server.model_id, "max_tokens": 2, "temperature": 0,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    status, text, _ = raw_request(server.port, "POST", chat, good, auth)
    check(status == 200 and json.loads(text)["usage"]["completion_tokens"] == 2,
          f"a valid request right after: {status} {text[:200]!r}")


def spec_fields(schemas, name):
    """The property names of a request schema in the spec (through allOf and $ref)."""
    spec = schemas.registry.contents("urn:openai")["components"]["schemas"]

    def props(node):
        if "$ref" in node:
            return props(spec[node["$ref"].split("/")[-1]])
        out = {}
        for part in node.get("allOf", []):
            out.update(props(part))
        out.update(node.get("properties", {}))
        return out
    return sorted(props(spec[name]))


# The spec's request fields the codec acts on (honours or refuses by name). The others it defines
# (user, store, metadata, service_tier, verbosity, audio, ...) are ignored like unknown fields,
# whatever their type: not checked here.
HONOURED = {"model", "messages", "prompt", "stream_options", "temperature", "top_p", "max_tokens",
            "max_completion_tokens", "stop", "seed", "frequency_penalty", "presence_penalty", "n",
            "logprobs", "top_logprobs", "tools", "tool_choice", "response_format", "logit_bias",
            "echo", "suffix", "best_of"}


def check_wrong_types(server, schemas, key, check):
    """Every field the codec acts on, with a value of each JSON type: the same rule as for the
    numeric extremes (the spec refuses -> a 400 naming the field). Two stated leniencies: null
    means "not given" even where the spec's schema is not nullable (clients send null for
    unset), and a model name of the right type may be a 404 model_not_found."""
    auth = {"Authorization": "Bearer " + key}
    bases = {"/v1/chat/completions": ({"model": server.model_id, "max_tokens": 1, "temperature": 0,
                                       "messages": [{"role": "user", "content": "hi"}]},
                                      "CreateChatCompletionRequest", "CreateChatCompletionResponse"),
             "/v1/completions": ({"model": server.model_id, "prompt": "Hi", "max_tokens": 1,
                                  "temperature": 0}, "CreateCompletionRequest",
                                 "CreateCompletionResponse")}
    tried = refused = 0
    for path, (base, request_schema, response_schema) in bases.items():
        fields = spec_fields(schemas, request_schema)
        check(HONOURED & set(fields) >= {"model", "temperature", "max_tokens", "stop"},
              f"the spec's {request_schema} fields were read: {fields[:5]}...")
        for field in sorted(HONOURED & set(fields)):
            for value in ("5", 5, [5], {"a": 1}, True, None):
                body = {**base, field: value}
                if value is None:  # as if not given: allowed where leaving it out is
                    allowed = schemas.accepts(request_schema,
                                              {k: v for k, v in base.items() if k != field})
                else:
                    allowed = schemas.accepts(request_schema, body)
                status, text, _ = raw_request(server.port, "POST", path, json.dumps(body).encode(),
                                              auth)
                tried += 1
                what = f"{path} {field}={value!r} (spec {'allows' if allowed else 'refuses'})"
                if status == 200 and allowed:
                    schemas.validate(response_schema, json.loads(text), what)
                    continue
                refused += 1
                wanted = 404 if field == "model" and allowed else 400
                check(status == wanted, f"{what}: status {status}: {text[:200]!r}")
                if status == wanted:
                    error = json.loads(text)["error"]
                    check((error.get("param") or "").startswith(field),
                          f"{what}: the {status} names {error.get('param')!r}: {error['message']}")
    print(f"wrong types: {tried} requests, {refused} refused", flush=True)
