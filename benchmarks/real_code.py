"""Run seqlen-guard over released packages that call `get_seq_length()`.

Each `name==version` requirement is fetched with `pip download --no-deps` into
`benchmarks/.cache/` (gitignored), unpacked, checked with
`python -m lint_rules --format json --exit-zero` and fixed with
`python -m fixers.rewrite --diff --format json --exit-zero` (safe fixes only, nothing
written), with a neutral config, or with `--declarations FILE` each package's own
`[tool.seqlen-guard]` table from FILE (`target-transformers`, `int-length-caches`,
`int-length-classes`; see benchmarks/declarations.toml; transformers itself is pinned to its own
release there). Every finding goes into one JSON file, and a per-package count table (by
rule, by fix safety) is printed as Markdown. Exit status 1 when an engine run failed
(its error is printed and kept in the JSON), else 0.

The engine run is the one in the working directory this script is started from (a
git worktree of another commit runs that commit's engine):

    cd /work/baseline && python /work/main/benchmarks/real_code.py -o base.json
    python benchmarks/real_code.py peft==0.21.2 --output results.json --markdown table.md
    python benchmarks/real_code.py --declarations benchmarks/declarations.toml -o pinned.json
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lint_rules.rules import ALL_CODES

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import NEUTRAL_CONFIG  # an empty table: no pyproject.toml of the engine or of a package applies

DEFAULT_REQUIREMENTS = (
    "transformers==5.5.3",
    "transformers==5.24.0",
    "peft==0.21.2",
    "unsloth==2026.10.9",
    "unsloth-zoo==2026.10.9",
    "ms-swift==4.6.0",
    "sglang==0.5.23",
    "optimum-intel==2.2.0",
    "optimum-habana==1.21.2",
    "gptqmodel==7.7.0",
    "llmcompressor==0.14.0.1",
    "auto-round==0.16.1",
    "parler-tts==0.2.3",
    "ipex-llm==2.2.0",
    "optimum-tpu==0.2.3",
    "xtuner==0.2.0",
    "torchao==0.18.0",
    "optimum-onnx==0.1.0",
    "liger-kernel==0.8.5",
    "qwen-tts==0.1.1",
    "kani-tts==1.0.1",
    "nvidia-modelopt==0.47.0",
    "kvpress==0.5.5",
    "autoawq==0.2.9",
    "optimum-executorch==1.1.0",
    "economize==0.3.2",
    "flashspec==0.3.1",
    "flashmap==0.1.0",
    "dflash==0.1.0",
    "xinference==4.1.0",
    "flash-linear-attention==0.6.0",
    "lmms-engine==0.1.4",
    "akv-cache==1.4.0",
    "adaptivekv==0.1.0",
    "specforge==0.2.0",
    "amd-quark==0.13",
    "coqui-tts==0.28.0",
    "nemo-toolkit==3.0.0",
    "intel-extension-for-transformers==1.4.2",
    "ms-vlmeval==0.0.20",
    "transformer-lens==4.3.0",
    "avp==0.6.2",
    # Packages with cache classes or vendored models of their own, read on 2026-12-02 (REAL_CODE.md).
    "transformers-mblt==0.6.1",
    "turboquantdc==0.2.0",
    "polarquant==0.6.0",
    "randkv==0.1.0",
    "fade-kv==1.1.0",
    "kvboost==0.9.0",
    "kvquant-plus-plus==0.1.17",
    "tiny-turboquant==0.18.0",
    "turboquant==0.2.0",
    "cacheshrink==0.1.5",
    "axolotl==0.19.0",
    "deepspeed==0.19.8",
    "nearlossless-context==0.2.0",
    "zerokv-neo==4.0.0",
    "alora==0.3.0",
    "chattts==0.2.5",
    "nexusquant-kv==0.6.3",
    "verl-speco==0.1.0",
    "thoughtrelay==0.1.0",
    "ouro-cache-fix==0.1.0",
    "tqai==0.6.1",
    "tt-symbiote==0.1.6",
    "boson-multimodal==0.1.1",
    "vllm-omni==0.30.0",
    "rotalabs-accel==1.1.1",
    "csaq-quant==0.6.0",
    # Released packages new to the corpus, labelled by a reader after the checker ran, on 2026-12-05 (REAL_CODE.md).
    "turboquant-kv==1.0.0",
    "vllm-mblt==0.8.0",
    "tardigrade-db==0.8.1",
    "tico==0.3.0",
    "qai-hub-models==0.65.0",
    "executorch==1.5.1",
    "litert-torch==0.10.0",
    "kakeyalattice==1.5.0",
    "turboquant-pro==1.9.1",
    "prismaquant==0.16.2",
    "polykv-llm==0.1.0",
    "flashcodec-kv==1.0.0",
    # A second round of released packages new to the corpus, labelled the same way, on 2026-12-05 (REAL_CODE.md).
    "colossalai==0.5.0",
    "guidance==0.3.1",
    "lerobot==0.4.4",
    "adapters==1.3.0",
    "llm2vec==0.2.3",
    "diffusers==0.42.1",
    "qwen-asr==0.0.6",
    "pruna==0.3.4",
    "flagembedding==1.4.2",
    "rwkv7-hf==0.9.0",
    "gliner==0.2.29",
    # A third round of released packages new to the corpus, labelled the same way, on 2026-12-05 (REAL_CODE.md).
    "nemo-automodel==0.7.0",
    "loom-scope==0.8",
    "fastvideo==0.2.1",
    "msmodelslim==26.1.0",
    "syncode==0.4.16",
    "mineru==4.0.12",
    "mitigv==0.1.7",
    "betterairllm==2.11.0",
    "angelslim==0.5.0",
    "pysteer-adaptation==0.1.2",
    # A fourth round, labelled by a reader after the checker ran, on 2026-12-05 night (REAL_CODE.md).
    "qwen-tts-compat==0.1.1.post1",
    "onnx-diagnostic==0.9.3",
    "qwen-asr-dgxspark==0.1.1",
    "indextts2-inference==2.1.1",
    "indextts2-cli==1.0.2",
    "sparsevlm==0.1.3",
    "easydel==0.3.0",
    "lightning-thunder==0.2.6",
    "repsteer==0.2.4",
    "turboquant-torch==0.4.0",
    "rwkv-fla==0.7.202508221413",
    "eagle-llm==1.2.1",
    "bagel2==0.0.6",
    "qwen3-asr-causal==0.1.0",
    "indextts25-inference==0.2.0",
    "olive-ai==0.13.0",
    "auto-gptq==0.7.1",
    "lade-gml==0.0.4",
    "zelt-ai==0.2.2",
    "sillage==1.9.2",
    "qwen-tts-hf==0.1.1.post1",
    # A sixth round, labelled by a reader after the checker ran, on 2026-12-06 (REAL_CODE.md).
    "diffsynth==2.1.12",
    "paddleformers==1.2.0",
    "trinity-rft==0.6.0",
    "fasr-asr-qwen3==0.5.1",
    "fasr-asr-qwen3asr==0.5.8",
    "sglang-omni==0.1.9",
    "kani-tts-2==0.0.5",
    "lsglang==1.6.5",
    "ipex-llm-fix==2.1.2",
    "mechbench-compute==0.209.0",
    "sglang-kt==0.7.2",
)
SAFETIES = ("safe", "unsafe", "none")
CACHE = Path(__file__).resolve().parent / ".cache"
FINDING_KEYS = ("line", "column", "code", "message", "function", "compiled_region")
SOURCE_MARKER = b"get_seq_length"
# The keys of a package's table in --declarations that go into its [tool.seqlen-guard] table.
DECLARED_KEYS = ("target-transformers", "int-length-caches", "int-length-classes")
REFUSAL_MARKER = "declaration refused"
RANGE_NOTE = "seqlen-guard: checking for transformers"


@dataclasses.dataclass(frozen=True)
class Package:
    """One unpacked release."""

    name: str
    version: str
    root: Path


@dataclasses.dataclass(frozen=True)
class EngineRun:
    """What one engine command printed."""

    returncode: int
    findings: list[dict[str, Any]]
    diff: bytes
    """The patch as the fixer wrote it: each file's own encoding and line endings, kept byte for byte."""
    stderr: str


def parse_requirement(text: str) -> tuple[str, str]:
    """`name==version` as its two parts."""
    name, sep, version = text.partition("==")
    if not sep or not name.strip() or not version.strip():
        raise argparse.ArgumentTypeError(f"expected name==version, got {text!r}")
    return name.strip(), version.strip()


def download(name: str, version: str, cache: Path) -> Path:
    """The wheel or sdist of `name==version`, fetched once into `cache`."""
    target = cache / "downloads" / f"{name}-{version}"
    found = sorted(target.glob("*")) if target.is_dir() else []
    if not found:
        target.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet"]
        command += [f"{name}=={version}", "-d", str(target)]
        subprocess.run(command, check=True)
        found = sorted(target.glob("*"))
    if len(found) != 1:
        raise RuntimeError(f"{name}=={version}: expected one archive in {target}, found {found}")
    return found[0]


def unpack(archive: Path, destination: Path) -> Path:
    """Unpack a wheel or sdist into `destination` once; the folder the package's paths start at. Each
    run extracts into a folder of its own and renames it into place, so that two runs sharing the
    cache never mix their files (one run's cleanup once emptied half of another's package)."""
    if not destination.is_dir():
        destination.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=destination.name + ".partial-", dir=destination.parent))
        try:
            extract(archive, partial)
            partial.rename(destination)
        except OSError:
            if not destination.is_dir():  # not another run's rename that came first
                raise
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    entries = [entry for entry in destination.iterdir() if not entry.name.startswith(".")]
    is_sdist = not archive.name.endswith(".whl")
    if is_sdist and len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return destination


def extract(archive: Path, destination: Path) -> None:
    """Extract a .whl/.zip or a .tar.* archive."""
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as opened:
            opened.extractall(destination)
        return
    with tarfile.open(archive) as opened:
        opened.extractall(destination, filter="data")


def fetch(requirement: tuple[str, str], cache: Path) -> Package:
    """Download and unpack one requirement."""
    name, version = requirement
    archive = download(name, version, cache)
    root = unpack(archive, cache / "unpacked" / f"{name}-{version}")
    return Package(name, version, root)


def engine_env(engine: Path) -> dict[str, str]:
    """The environment that makes `python -m lint_rules` import the engine in `engine`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(engine), env.get("PYTHONPATH", "")]))
    return env


def engine_location(engine: Path) -> str:
    """Where the subprocesses import `lint_rules` from (to record which engine ran)."""
    command = [sys.executable, "-c", "import lint_rules; print(lint_rules.__file__)"]
    done = subprocess.run(command, cwd=engine, env=engine_env(engine), capture_output=True, text=True, check=True)
    return done.stdout.strip()


def split_json_tail(stdout: bytes) -> tuple[bytes, list[dict[str, Any]]]:
    """Split the fixer's `--diff --format json` output into the diff and the findings.

    Diff lines start with `-`, `+`, ` `, `@` or `\\`; the JSON array starts on a line of its own.
    Bytes, not text: the patch keeps each file's encoding and its CRs.
    """
    lines = stdout.splitlines(keepends=True)
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith(b"["):
            return b"".join(lines[:index]), json.loads(b"".join(lines[index:]))
    return stdout, []


def run_engine(module: str, extra: list[str], package: Package, engine: Path, config: Path) -> EngineRun:
    """Run `python -m module` from the engine's folder over one package."""
    command = [sys.executable, "-m", module, "--config", str(config), "--format", "json"]
    command += ["--exit-zero", *extra, str(package.root)]
    done = subprocess.run(command, cwd=engine, env=engine_env(engine), capture_output=True)
    stderr = done.stderr.decode("utf-8", errors="backslashreplace")  # a message, kept readable whatever its bytes
    try:
        diff, findings = split_json_tail(done.stdout) if done.stdout.strip() else (b"", [])
    except ValueError as error:  # not JSON: keep the run, report it as a problem
        return EngineRun(done.returncode or 1, [], b"", f"{stderr}\nunreadable JSON output: {error}")
    return EngineRun(done.returncode, findings, diff, stderr)


def load_declarations(path: Path) -> dict[str, dict[str, Any]]:
    """The `[packages."name"]` tables of a declarations file, by package name."""
    with path.open("rb") as file:
        packages = tomllib.load(file).get("packages", {})
    for name, table in packages.items():
        unknown = sorted(set(table) - {*DECLARED_KEYS, "why"})
        if unknown:
            raise SystemExit(f"{path}: [packages.{name!r}]: unknown key {unknown[0]!r}")
    return dict(packages)


def own_release(package: Package) -> dict[str, Any] | None:
    """transformers' own code runs on its own release: its pin, where the declarations give none."""
    if package.name != "transformers":
        return None
    return {"target-transformers": f"=={package.version}", "why": "transformers' own release"}


def declared_config(package: Package, table: dict[str, Any], folder: Path) -> Path:
    """A config file in `folder` with the package's declared `[tool.seqlen-guard]` keys.

    The file lives outside the package, so the `int-length-caches` globs (relative to the package
    root, as its own pyproject.toml would read them) are written as absolute paths.
    """
    lines = ["[tool.seqlen-guard]"]
    for key in DECLARED_KEYS:
        if key not in table:
            continue
        value = table[key]
        if key == "int-length-caches" and isinstance(value, list):
            value = [str(package.root / glob) for glob in value]
        lines.append(f"{key} = {toml_value(value)}")
    config = folder / f"{package.name}-{package.version}.toml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


def toml_value(value: Any) -> str:
    """A bool, string or list of strings as TOML (JSON's string escapes are TOML's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def refusals(stderr: str) -> list[str]:
    """The checker's `declaration refused` lines."""
    return [line.strip() for line in stderr.splitlines() if REFUSAL_MARKER in line]


def finding_key(finding: dict[str, Any]) -> tuple[Any, ...]:
    """What identifies one finding across the checker's and the fixer's output."""
    return (finding["path"], finding["line"], finding["column"], finding["code"])


def relative(path: str, root: Path) -> str:
    """A path printed by the engine, relative to the package root, with `/` separators."""
    return Path(os.path.relpath(path, root)).as_posix()


def merge(package: Package, check: EngineRun, fix: EngineRun) -> list[dict[str, Any]]:
    """The checker's findings, each with the fixer's verdict on whether it was fixed."""
    applied = {finding_key(item): item["fix"].get("applied") for item in fix.findings}
    rows = []
    for item in check.findings:
        fix_info = item.get("fix") or {}
        row: dict[str, Any] = {"package": package.name, "version": package.version}
        row["path"] = relative(item["path"], package.root)
        row.update({key: item.get(key) for key in FINDING_KEYS})
        row["origin_line"] = item.get("origin_line")
        row["fix_safety"] = fix_info.get("safety")
        row["fix_kind"] = fix_info.get("kind")
        row["fix_reason"] = fix_info.get("reason")
        row["fix_applied_by_fixer"] = applied.get(finding_key(item))
        rows.append(row)
    return sorted(rows, key=lambda row: (row["path"], row["line"], row["column"], row["code"]))


def candidate_files(root: Path) -> tuple[int, int]:
    """How many .py files the package has, and how many mention `get_seq_length`."""
    total = mentions = 0
    for path in root.rglob("*.py"):
        total += 1
        try:
            mentions += SOURCE_MARKER in path.read_bytes()
        except OSError:
            continue
    return total, mentions


def diff_stats(diff: bytes) -> dict[str, int]:
    """Files and added lines in the fixer's patch."""
    files = sum(1 for line in diff.splitlines() if line.startswith(b"+++ "))
    added = sum(1 for line in diff.splitlines() if line.startswith(b"+") and not line.startswith(b"+++"))
    return {"files_rewritten": files, "lines_added": added}


def last_line(text: str) -> str:
    """The last non-empty line of a command's stderr (the fixer's summary)."""
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def analyse(package: Package, engine: Path, config: Path, cache: Path, flags: Sequence[str] = ()) -> dict[str, Any]:
    """Check and fix one package with `config` and the engine `flags`; its findings and a summary."""
    check = run_engine("lint_rules", list(flags), package, engine, config)
    fix = run_engine("fixers.rewrite", ["--diff", *flags], package, engine, config)
    diff_path = cache / "diffs" / f"{package.name}-{package.version}.diff"
    diff_path.parent.mkdir(parents=True, exist_ok=True)
    diff_path.write_bytes(fix.diff)
    total, mentions = candidate_files(package.root)
    summary = {
        "package": package.name,
        "version": package.version,
        "root": str(package.root),
        "python_files": total,
        "files_mentioning_get_seq_length": mentions,
        "check_returncode": check.returncode,
        "check_stderr": check.stderr.strip(),
        "config": config.read_text(encoding="utf-8"),
        "declaration_refusals": refusals(check.stderr),
        "fix_returncode": fix.returncode,
        "fix_summary": last_line(fix.stderr),
        "fix_diff": str(diff_path),
        **diff_stats(fix.diff),
    }
    return {"summary": summary, "findings": merge(package, check, fix)}


def count_table(results: list[dict[str, Any]]) -> str:
    """The Markdown table of findings per package, by rule and by fix safety."""
    header = ["package", "files w/ call", "findings", *ALL_CODES, *SAFETIES, "files fixed"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    totals: collections.Counter[str] = collections.Counter()
    for result in results:
        summary, findings = result["summary"], result["findings"]
        counts = counts_of(findings)
        counts["files w/ call"] = summary["files_mentioning_get_seq_length"]
        counts["files fixed"] = summary["files_rewritten"]
        totals.update(counts)
        name = f"{summary['package']}=={summary['version']}"
        lines.append(table_row(name, counts, header[1:]))
    lines.append(table_row("**total**", totals, header[1:]))
    return "\n".join(lines) + "\n"


def counts_of(findings: list[dict[str, Any]]) -> collections.Counter[str]:
    """Findings counted in total, by code and by fix safety."""
    counts: collections.Counter[str] = collections.Counter()
    counts["findings"] = len(findings)
    counts.update(finding["code"] for finding in findings)
    counts.update(str(finding["fix_safety"]) for finding in findings)
    return counts


def table_row(name: str, counts: collections.Counter[str], columns: list[str]) -> str:
    """One Markdown table row."""
    return "| " + " | ".join([name, *(str(counts[column]) for column in columns)]) + " |"


def unexpected_stderr(stderr: str) -> str:
    """The checker's stderr less the line naming the transformers range it checks for."""
    return "\n".join(line for line in stderr.splitlines() if not line.startswith(RANGE_NOTE))


def problems(results: list[dict[str, Any]]) -> list[str]:
    """Engine runs that failed or reported unreadable files."""
    found = []
    for result in results:
        summary = result["summary"]
        name = f"{summary['package']}=={summary['version']}"
        stderr = unexpected_stderr(summary["check_stderr"])
        if summary["check_returncode"] != 0 or stderr:
            found.append(f"{name}: checker exited {summary['check_returncode']}: {stderr}")
        if summary["fix_returncode"] != 0:
            found.append(f"{name}: fixer exited {summary['fix_returncode']}: {summary['fix_summary']}")
    return found


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "requirements",
        nargs="*",
        type=parse_requirement,
        help="name==version of each package (default: the benchmark set)",
    )
    parser.add_argument("-o", "--output", type=Path, default=Path("real_code.json"), help="the JSON file to write")
    parser.add_argument("--markdown", type=Path, help="also write the count table to this file")
    parser.add_argument("--cache", type=Path, default=CACHE, help="where downloads are kept (default: %(default)s)")
    parser.add_argument(
        "--declarations",
        type=Path,
        help="a TOML file of [packages.NAME] tables (target-transformers, int-length-caches, int-length-classes);"
        " each package listed is checked with its own table instead of the neutral config",
    )
    parser.add_argument(
        "--pins-only",
        action="store_true",
        help="with --declarations: pass --no-declarations to the engine (only target-transformers applies)",
    )
    args = parser.parse_args(argv)
    if args.pins_only and not args.declarations:
        parser.error("--pins-only needs --declarations")
    if not args.requirements:
        args.requirements = [parse_requirement(text) for text in DEFAULT_REQUIREMENTS]
    return args


def engine_flags(args: argparse.Namespace) -> list[str]:
    """`--no-declarations` for `--pins-only`: the declared ranges apply, int-length-caches/-classes do not."""
    return ["--no-declarations"] if args.pins_only else []


def main(argv: list[str] | None = None) -> int:
    """Fetch, check and fix every package; write the JSON and print the table."""
    args = parse_args(argv)
    engine = Path.cwd().resolve()
    cache = args.cache.resolve()
    cache.mkdir(parents=True, exist_ok=True)
    config = cache / "pyproject.toml"
    config.write_text(NEUTRAL_CONFIG, encoding="utf-8")
    declarations = load_declarations(args.declarations) if args.declarations else {}
    location = engine_location(engine)
    print(f"engine: {location}", file=sys.stderr)
    results = []
    with tempfile.TemporaryDirectory(prefix="real_code_configs_") as configs:
        for requirement in args.requirements:
            package = fetch(requirement, cache)
            print(f"checking {package.name}=={package.version}", file=sys.stderr)
            declared = declarations.get(package.name) or (own_release(package) if declarations else None)
            used = declared_config(package, declared, Path(configs)) if declared is not None else config
            results.append(analyse(package, engine, used, cache, engine_flags(args)))
    table = count_table(results)
    report = {
        "engine": location,
        "declarations": str(args.declarations) if args.declarations else None,
        "pins_only": args.pins_only,
        "packages": [result["summary"] for result in results],
        "findings": [finding for result in results for finding in result["findings"]],
        "table": table,
    }
    args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    print(table, end="")
    found = problems(results)
    for problem in found:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
