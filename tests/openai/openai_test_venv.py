#!/usr/bin/env python3
"""The pinned venv that the openai SDK checks run in (serve and router tests), created on first
use. Run as a script it creates the venv at the given path and prints that path, which is how
scripts/common.sh makes one outside the build folder once, for every build and clone to share.
   openai_test_venv.py PATH"""
import os
import subprocess
import sys
import venv

# Pinned: the SDK whose exception types and stream parser the checks rely on, and the schema
# validator (jsonschema with its `referencing` registry) plus PyYAML for the spec.
PINS = ["openai==3.57.0", "jsonschema==4.26.0", "PyYAML==6.0.4", "httpx==0.28.1"]


def ensure_venv(path):
    """The venv's python; the venv is (re)made when it lacks these exact pins."""
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


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: openai_test_venv.py PATH")
    ensure_venv(sys.argv[1])
    print(sys.argv[1])
