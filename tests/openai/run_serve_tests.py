#!/usr/bin/env python3
"""Runs serve_checks.py (ember-serve against the official openai SDK and the OpenAPI schemas)
in the pinned venv of openai_test_venv.py: --venv, created there on first use (the build folder's
by default; the scripts make one in ~/.cache/ember and configure the build with it)."""
import argparse
import os
import subprocess
import sys

from openai_test_venv import ensure_venv

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
