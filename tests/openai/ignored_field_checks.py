"""The request fields the OpenAI spec defines that the codec does not act on (user, store,
metadata, service_tier, ...): they are ignored, but a value of a JSON type the spec does not give
the field must be a 400 naming it, as the OpenAI API answers. Reference: the OpenAI OpenAPI file
(CreateChatCompletionRequest, CreateCompletionRequest). Both the list of fields (every property
of the request schema, through allOf and $ref, minus the ones value_checks.HONOURED covers) and
each field's JSON types (its schema's `type`, `enum` and `const`, through $ref, anyOf, oneOf and
allOf) are read from the spec here, not written by hand.
The rule: a value whose JSON type the spec does not allow -> 400 whose `param` is the field; a
value the spec's schema accepts whole -> 200 with a body valid against the response schema, or a
400 naming the field where Ember documents a refusal (the deprecated functions/function_call,
like tools/tool_choice). A value of an allowed type that the spec still refuses (an object with
the wrong keys, a string outside an enum) is not checked: the codec only checks types of fields
it ignores. Null is "not given" (allowed), as for every other field."""
import json

from serve_support import raw_request
from value_checks import HONOURED, spec_fields

# One value of each JSON type (an integer is also a number in JSON Schema).
VALUES = {"string": "5", "integer": 5, "number": 1.5, "array": [5], "object": {"a": 1},
          "boolean": True}
EMBER_REFUSES = {"functions", "function_call"}  # docs/local-api-server.md


def _json_types(spec, node):
    while "$ref" in node:
        node = spec[node["$ref"].split("/")[-1]]
    types = set()
    if "type" in node:
        types |= set(node["type"] if isinstance(node["type"], list) else [node["type"]])
    for key in ("anyOf", "oneOf", "allOf"):
        for part in node.get(key, []):
            types |= _json_types(spec, part)
    names = {str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null"}
    for value in node.get("enum", []) + ([node["const"]] if "const" in node else []):
        types.add(names[type(value)])
    if "number" in types:
        types.add("integer")
    return types


def _field_schema(spec, name, field):
    def props(node):
        if "$ref" in node:
            return props(spec[node["$ref"].split("/")[-1]])
        out = {}
        for part in node.get("allOf", []):
            out.update(props(part))
        out.update(node.get("properties", {}))
        return out
    return props(spec[name])[field]


def check_ignored_field_types(server, schemas, key, check):
    auth = {"Authorization": "Bearer " + key}
    spec = schemas.registry.contents("urn:openai")["components"]["schemas"]
    bases = {"/v1/chat/completions": ({"model": server.model_id, "max_tokens": 1, "temperature": 0,
                                       "messages": [{"role": "user", "content": "hi"}]},
                                      "CreateChatCompletionRequest", "CreateChatCompletionResponse"),
             "/v1/completions": ({"model": server.model_id, "prompt": "Hi", "max_tokens": 1,
                                  "temperature": 0}, "CreateCompletionRequest",
                                 "CreateCompletionResponse")}
    tried = wrong = 0
    fields_seen = set()
    for path, (base, request_schema, response_schema) in bases.items():
        ignored = sorted(set(spec_fields(schemas, request_schema)) - HONOURED - {"stream"})
        fields_seen |= set(ignored)
        for field in ignored:
            allowed_types = _json_types(spec, _field_schema(spec, request_schema, field))
            check(allowed_types - {"null"}, f"{request_schema}.{field}: types read from the spec")
            for json_type, value in VALUES.items():
                body = {**base, field: value}
                status, text, _ = raw_request(server.port, "POST", path, json.dumps(body).encode(),
                                              auth)
                tried += 1
                what = f"{path} {field}={value!r} (spec types {sorted(allowed_types)})"
                check(status in (200, 400), f"{what}: status {status}: {text[:200]!r}")
                param = json.loads(text)["error"].get("param") if status == 400 else None
                if json_type not in allowed_types:
                    wrong += 1
                    check(status == 400 and param == field,
                          f"{what}: a wrong type must be a 400 naming {field}: {status} {text[:200]!r}")
                elif schemas.accepts(request_schema, body):
                    if status == 200:
                        schemas.validate(response_schema, json.loads(text), what)
                    else:
                        check(field in EMBER_REFUSES and param == field,
                              f"{what}: the spec allows it and Ember documents no refusal: "
                              f"{text[:200]!r}")
            # Null: as if not given.
            status, text, _ = raw_request(server.port, "POST", path,
                                          json.dumps({**base, field: None}).encode(), auth)
            check(status == 200, f"{path} {field}=null: {status} {text[:200]!r}")
    # The fields the codec is known to ignore, so that a spec without them (a parsing slip here)
    # fails instead of checking nothing.
    check(fields_seen >= {"user", "store", "metadata", "service_tier", "parallel_tool_calls"},
          f"ignored fields read from the spec: {sorted(fields_seen)}")
    print(f"ignored fields: {len(fields_seen)} fields, {tried} requests, {wrong} of a wrong type",
          flush=True)
