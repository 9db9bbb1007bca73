#!/usr/bin/env bash
# The demo: the linter alone (libcst and flake8, no torch) on transformers 5.5.3, the release with
# the reported bug. It fetches the wheel (pure Python, `pip download --no-deps`, kept in
# benchmarks/.cache), checks its generation code, shows the fixer's patch for it
# (`GenerationMixin._prefill`; nothing is written), then a finding left alone because it runs
# compiled (in one model file). Without the package index it uses the bundled example instead and
# says so.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
version=5.5.3
cache="$repo/benchmarks/.cache"
unpacked="$cache/transformers-$version"

if [ ! -x .venv/bin/seqlen-guard-fix ]; then
    [ -x .venv/bin/python ] || "$(command -v python3.11 || command -v python3)" -m venv .venv
    log="$(mktemp)"
    if ! .venv/bin/python -m pip install --quiet --disable-pip-version-check -e . >"$log" 2>&1; then
        cat "$log" >&2
        exit 1
    fi
    rm -f "$log"
fi
bin="$repo/.venv/bin"
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}" # this checkout's code, whatever the venv was installed from

# The wheel's transformers/ folder, unpacked once; fails (quietly) when the index cannot be reached.
fetch_transformers() {
    [ -d "$unpacked/transformers" ] && return 0
    mkdir -p "$cache"
    "$bin/python" -m pip download --quiet --disable-pip-version-check --no-deps --retries 1 --timeout 15 \
        "transformers==$version" -d "$cache" >/dev/null 2>&1 || return 1
    rm -rf "$unpacked.partial"
    "$bin/python" - "$cache/transformers-$version-py3-none-any.whl" "$unpacked.partial" <<'PY' || return 1
import sys
import zipfile

with zipfile.ZipFile(sys.argv[1]) as wheel:
    wheel.extractall(sys.argv[2], [name for name in wheel.namelist() if name.startswith("transformers/")])
PY
    mv "$unpacked.partial" "$unpacked"
}

if fetch_transformers; then
    cd "$unpacked"
    target=transformers/generation
    scope=transformers/models/bert/modeling_bert.py # one model file: a forward, so a compiled region
    echo "== transformers $version, the release with the reported bug (wheel cached in benchmarks/.cache)"
else
    target=examples/prefill_before.py
    scope=$target
    echo "== the package index cannot be reached: showing the bundled $target instead of transformers $version"
fi

echo
echo "== seqlen-guard $target"
status=0
"$bin/seqlen-guard" "$target" || status=$?
echo "(exit status $status: 0 clean, 1 findings, 2 error)"

echo
echo "== seqlen-guard-fix --diff $target   (the patch for the findings above; writes nothing)"
status=0
report="$(mktemp)"
"$bin/seqlen-guard-fix" --diff "$target" 2>"$report" || status=$?
grep -v ": SLG" "$report" || true # errors and the summary; the findings were listed above
rm -f "$report"
echo "(exit status $status: 1 while a file would change)"

echo
echo "== left alone: a finding in a compiled region (seqlen-guard-fix --check $scope)"
report="$(mktemp)"
"$bin/seqlen-guard-fix" --check "$scope" 2>"$report" || true
grep -m 1 "compiled region" "$report" || echo "(none found)"
rm -f "$report"
