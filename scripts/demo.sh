#!/usr/bin/env bash
# The demo: install the linter alone (libcst and flake8, no torch), check the
# installed transformers' generation code (or a bundled example when transformers
# is not installed), then show the fixer's patch without writing anything.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
    "$(command -v python3.11 || command -v python3)" -m venv .venv
fi
install_log="$(mktemp)"
if ! .venv/bin/python -m pip install --quiet --disable-pip-version-check -e . >"$install_log" 2>&1; then
    cat "$install_log" >&2
    exit 1
fi
rm -f "$install_log"

# The folder transformers is installed in, found without importing it (or torch).
site_packages() {
    for python in .venv/bin/python python3; do
        "$python" - <<'PY' 2>/dev/null && return
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("transformers")
if spec is None or spec.origin is None:
    sys.exit(1)
print(pathlib.Path(spec.origin).parent.parent)
PY
    done
    return 1
}

bin="$PWD/.venv/bin"
if folder="$(site_packages)"; then
    cd "$folder"
    target=transformers/generation
    echo "== in $folder, where transformers is installed"
else
    target=examples/prefill_before.py
    echo "== transformers is not installed; using the bundled example"
fi

echo
echo "== seqlen-guard $target"
status=0
"$bin/seqlen-guard" "$target" || status=$?
echo "(exit status $status: 0 clean, 1 findings, 2 error)"

echo
echo "== seqlen-guard-fix --diff $target   (writes nothing)"
status=0
"$bin/seqlen-guard-fix" --diff "$target" || status=$?
echo "(exit status $status: 1 while fixes are pending)"
