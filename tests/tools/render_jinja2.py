#!/usr/bin/env python3
"""Reference chat-template renderer: Python's Jinja2, set up the way Hugging Face transformers
renders `tokenizer.chat_template` (ImmutableSandboxedEnvironment with trim_blocks and
lstrip_blocks, the loopcontrols extension, the globals raise_exception and strftime_now, and a
tojson filter that is json.dumps(..., ensure_ascii=False)). Ember's C++ renderer is tested
against it byte for byte (see ../shared/testdata/README.md, "chat-templates/").

Two modes:
  --batch            read {"now": ISO-8601 or null, "cases": [{"id", "template", "variables"}]}
                     on stdin; write [{"id", "ok", "output" | "error_type", "message"}] on stdout.
  --template FILE --messages FILE.json [--add-generation-prompt] [--bos S] [--eos S] [--now ISO]
                     mirrors `ember-cli render-template`: prints the rendered text and nothing
                     else; on failure prints "ERROR_TYPE: message" on stderr and exits 1.

--now / "now" freeze what strftime_now() formats, so both renderers print the same date.
"""
import argparse
import json
import sys
from datetime import datetime

import jinja2
from jinja2.exceptions import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def make_environment(now):
    def raise_exception(message):
        raise TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(format):
        return (now or datetime.now()).strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(env, source, variables):
    try:
        return {"ok": True, "output": env.from_string(source).render(**variables)}
    except Exception as e:  # every failure is a result to compare, not a crash
        result = {"ok": False, "error_type": type(e).__name__, "message": str(e)}
        if isinstance(e, jinja2.TemplateSyntaxError):
            result["message"] = e.message or ""
            result["line"] = e.lineno
        return result


def parse_now(text):
    return datetime.fromisoformat(text) if text else None


def run_batch():
    request = json.load(sys.stdin)
    env = make_environment(parse_now(request.get("now")))
    results = []
    for case in request["cases"]:
        result = render(env, case["template"], case["variables"])
        result["id"] = case["id"]
        results.append(result)
    sys.stdout.write(json.dumps(results, ensure_ascii=True))


def run_single(args):
    with open(args.template, "rb") as f:
        source = f.read().decode("utf-8")
    with open(args.messages, "rb") as f:
        data = json.loads(f.read().decode("utf-8"))
    variables = {"messages": data} if isinstance(data, list) else dict(data)
    # Flags win over the file's own variables; without them the file's values (or the defaults:
    # no generation prompt, empty bos/eos) apply.
    if args.add_generation_prompt:
        variables["add_generation_prompt"] = True
    variables.setdefault("add_generation_prompt", False)
    for name, value in (("bos_token", args.bos), ("eos_token", args.eos)):
        if value is not None:
            variables[name] = value
        variables.setdefault(name, "")
    result = render(make_environment(parse_now(args.now)), source, variables)
    if not result["ok"]:
        sys.stderr.write(f'{result["error_type"]}: {result["message"]}\n')
        sys.exit(1)
    sys.stdout.buffer.write(result["output"].encode("utf-8"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", action="store_true")
    parser.add_argument("--template")
    parser.add_argument("--messages")
    parser.add_argument("--add-generation-prompt", action="store_true")
    parser.add_argument("--bos")
    parser.add_argument("--eos")
    parser.add_argument("--now")
    parser.add_argument("--version", action="store_true", help="print the Jinja2 version")
    args = parser.parse_args()
    if args.version:
        print(jinja2.__version__)
    elif args.batch:
        run_batch()
    elif args.template and args.messages:
        run_single(args)
    else:
        parser.error("use --batch, or --template and --messages")


if __name__ == "__main__":
    main()
