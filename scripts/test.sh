#!/usr/bin/env bash
# The test command: build .venv when missing, install the project with its test
# extra, build the runtime tests' side environment, then ruff (lint and format),
# mypy --strict and pytest.
# Extra arguments go to pytest:  bash scripts/test.sh -m "not runtime"
set -euo pipefail
cd "$(dirname "$0")/.."

python_311_or_newer() {
    for candidate in python3.11 python3; do
        if command -v "$candidate" >/dev/null &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
            echo "$candidate"
            return
        fi
    done
    echo "scripts/test.sh: needs Python 3.11 or newer" >&2
    exit 2
}

if [ ! -x .venv/bin/python ]; then
    "$(python_311_or_newer)" -m venv .venv
fi
# The test extra pins torch==2.13.0 and nothing else asks for torch. What pip downloads for it
# depends on where it looks: from the package index alone, on Linux x86_64, the CUDA build (torch
# plus about twenty nvidia-*/cuda-* packages, several GB); with PyTorch's CPU wheel index in
# PIP_EXTRA_INDEX_URL, or a CPU wheel in PIP_FIND_LINKS (as on this project's CI), 2.13.0+cpu.
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'

if [ -f tests/runtime/build_envs.py ]; then
    .venv/bin/python tests/runtime/build_envs.py
fi

.venv/bin/python -m ruff check .
.venv/bin/python -m ruff format --check .
.venv/bin/python -m mypy --strict lint_rules fixers
.venv/bin/python -m pytest -n 2 "$@"
