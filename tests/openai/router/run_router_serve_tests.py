#!/usr/bin/env python3
"""Runs router_serve_checks.py (ember-serve --upstream in front of two ember-serve upstreams)
in the same pinned venv as the server's own openai SDK checks (created on first use)."""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from run_serve_tests import ensure_venv, require  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--venv", required=True)
    args, rest = parser.parse_known_args()
    models = os.environ.get("EMBER_MODELS_DIR", os.path.expanduser("~/.cache/ember/models"))
    model = require(os.path.join(models, "SmolLM2-135M-Instruct.Q4_1.gguf"), "EMBER_MODELS_DIR")
    python = ensure_venv(args.venv)
    checks = os.path.join(os.path.dirname(os.path.abspath(__file__)), "router_serve_checks.py")
    sys.exit(subprocess.run([python, checks, "--model", model, *rest]).returncode)


if __name__ == "__main__":
    main()
