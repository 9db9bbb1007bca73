"""Build the extra transformers environments used by the runtime tests.

The runtime tests compare an unmodified and a fixer-rewritten transformers
package. Besides the version installed in the venv they also run against the
newest 5.x release, installed with ``pip install --no-deps --target`` into a
folder that the test subprocesses put first on ``sys.path``.

``--no-deps`` keeps torch (and everything else) from the venv; any *runtime*
requirement of the target release that the venv does not satisfy (for
transformers 5.24.0: ``tokenizers>=0.23.1,<0.24.0``; the venv has 0.22.2) is
installed into the same target folder, so that ``import transformers`` passes
its own dependency version check. torch is never installed there.

Idempotent: a target holding the requested version, with a stamp file written
after a complete build, is left alone.

Usage::

    python tests/runtime/build_envs.py [--target DIR] [--version 5.24.0]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_VERSION = "5.24.0"
STAMP = ".seqlen-guard-env.json"
# Never pulled into a target: the venv's torch is the one under test.
NEVER_INSTALL = {"torch"}


def default_target(version: str = DEFAULT_VERSION) -> Path:
    return REPO_ROOT / ".runtime" / f"transformers-{version}"


def _canon(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


class InstallError(RuntimeError):
    """A release that cannot be installed here; the message says why (pip's own words)."""


def _pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]
    print("+", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    print(proc.stdout, end="", flush=True)
    if proc.returncode != 0:
        print(proc.stderr, end="", file=sys.stderr, flush=True)
        errors = [line for line in proc.stderr.splitlines() if line.startswith("ERROR")] or proc.stderr.splitlines()
        raise InstallError(f"pip {' '.join(args)} exited {proc.returncode}: {' '.join(errors[-3:]).strip()}")


def _dist_metadata(target: Path, name: str) -> metadata.Distribution | None:
    for dist in metadata.distributions(path=[str(target)]):
        if _canon(dist.metadata["Name"]) == _canon(name):
            return dist
    return None


def _unsatisfied_requirements(target: Path, dist: metadata.Distribution) -> list[str]:
    """Runtime requirements of ``dist`` that neither the target nor the venv satisfy."""
    from packaging.requirements import Requirement

    missing = []
    for raw in dist.requires or []:
        req = Requirement(raw)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue  # extras / other platforms
        if _canon(req.name) in NEVER_INSTALL:
            continue
        installed = _dist_metadata(target, req.name)
        if installed is None:
            try:
                version = metadata.version(req.name)
            except metadata.PackageNotFoundError:
                version = None
        else:
            version = installed.version
        if version is None or not req.specifier.contains(version, prereleases=True):
            missing.append(str(req).split(";")[0].strip())
    return missing


def is_built(target: Path, version: str = DEFAULT_VERSION) -> bool:
    stamp = target / STAMP
    if not stamp.is_file():
        return False
    try:
        info = json.loads(stamp.read_text())
    except ValueError:
        return False
    dist = _dist_metadata(target, "transformers")
    return info.get("transformers") == version and dist is not None and dist.version == version


def build(target: Path | None = None, version: str = DEFAULT_VERSION) -> Path:
    target = Path(target) if target is not None else default_target(version)
    if is_built(target, version):
        print(f"{target}: transformers {version} already built", flush=True)
        return target
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    _pip("install", "--no-deps", "--target", str(target), f"transformers=={version}")
    dist = _dist_metadata(target, "transformers")
    if dist is None or dist.version != version:
        raise InstallError(f"transformers {version} not found in {target} after install")
    extra = _unsatisfied_requirements(target, dist)
    if extra:
        # --no-deps again: their own dependencies (huggingface_hub, ...) come from the venv;
        # checked below.
        _pip("install", "--no-deps", "--target", str(target), *extra)
    # everything in the target now has what it needs (e.g. tokenizers' huggingface_hub from the venv)
    for installed in metadata.distributions(path=[str(target)]):
        left = _unsatisfied_requirements(target, installed)
        if left:
            raise InstallError(f"{installed.metadata['Name']}: requirements unsatisfied in {target}: {left}")
    if (target / "torch").exists():
        raise InstallError(f"torch was installed into {target}; refusing to use it")
    # A quick import check in a fresh interpreter, with the target first on sys.path.
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import transformers, torch; "
        "assert transformers.__file__.startswith(sys.argv[1]), transformers.__file__; "
        "print(transformers.__version__)"
    )
    proc = subprocess.run([sys.executable, "-c", probe, str(target)], capture_output=True, text=True)
    out = proc.stdout.strip()
    if proc.returncode != 0 or out != version:
        last = (proc.stderr.strip().splitlines() or [""])[-1]
        raise InstallError(f"import check: expected transformers {version}, got {out!r} {last}".strip())
    (target / STAMP).write_text(json.dumps({"transformers": version, "extra": extra}, indent=1))
    print(f"{target}: transformers {version} built (extra: {extra or 'none'})", flush=True)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=Path, default=None)
    parser.add_argument("--version", default=DEFAULT_VERSION)
    args = parser.parse_args(argv)
    build(args.target, args.version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
