#!/usr/bin/env python3
"""Runs serve_checks.py (ember-serve against the official openai SDK and the OpenAPI schemas)
in a venv inside the build folder, created on first use with pinned packages from PyPI."""
import argparse
import os
import subprocess
import sys
import venv

# Pinned: the SDK whose exception types and stream parser the checks rely on, and the schema
# validator (jsonschema with its `referencing` registry) plus PyYAML for the spec.
PINS = ["openai==3.57.0", "jsonschema==4.26.0", "PyYAML==6.0.4", "httpx==0.28.1"]


def ensure_venv(path):
    marker = os.path.join(path, "ember-pins.txt")
    wanted = "\n".join(PINS)
    if os.path.exists(marker) and open(marker).read() == wanted:
        return os.path.join(path, "bin", "python")
    venv.create(path, with_pip=True, clear=True)
    python = os.path.join(path, "bin", "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *PINS],
                   check=True)
    with open(marker, "w") as f:
        f.write(wanted)
    return python


SKIP = 77  # ctest SKIP_RETURN_CODE


def require(path, variable):
    """A missing reference fails under CI and is reported as not run elsewhere."""
    if os.path.exists(path):
        return path
    print(f"missing {path} (set {variable})", flush=True)
    sys.exit(1 if os.environ.get("CI") == "true" else SKIP)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--venv", required=True)
    parser.add_argument("--default-testdata", required=True)
    args, rest = parser.parse_known_args()
    testdata = os.environ.get("EMBER_TESTDATA", args.default_testdata)
    models = os.environ.get("EMBER_MODELS_DIR", os.path.expanduser("~/.cache/ember/models"))
    spec = require(os.path.join(testdata, "openai", "openapi.yaml"), "EMBER_TESTDATA")
    model = require(os.path.join(models, "SmolLM2-135M-Instruct.Q4_1.gguf"), "EMBER_MODELS_DIR")
    python = ensure_venv(args.venv)
    checks = os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve_checks.py")
    sys.exit(subprocess.run([python, checks, "--spec", spec, "--model", model, *rest]).returncode)


if __name__ == "__main__":
    main()
