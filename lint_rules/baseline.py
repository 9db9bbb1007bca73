"""The baseline: today's findings recorded in a file, so that a lint gate fails only on new ones.

`seqlen-guard --write-baseline` writes `seqlen-guard-baseline.json`; later runs report only the
findings that are not in it. An entry is keyed by the file (relative to the baseline's folder),
the rule and the finding's fingerprint (`lint_rules.fingerprints`: the enclosing function and the
normalized code of the use and of its source call, no line numbers), so it survives edits
elsewhere in the file. Entries are matched as a multiset per file: two equal findings need two
entries. A finding that values bound apart reach (one finding, a plan per value) is written as an
entry per value and is known while one of them matches; the others then count as fixed.

An entry of a checked file that no reported finding matches any more is either "suppressed" (a
finding that a suppression comment, or the configuration's select/ignore/per-file-ignores, now
silences still matches it) or "fixed" (no finding matches it at all). The next `--write-baseline`
drops both: the baseline records the findings that would be reported, so a suppression comment
removed later brings its finding back as new, not as silently known.

The checker applies the baseline inside `check_tree` (so that `-j` workers and the fixer's
convergence check see the same split), the command reports the stale entries.
"""

from __future__ import annotations

import collections
import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from lint_rules.findings import Finding
from lint_rules.fingerprints import every_fingerprint

DEFAULT_NAME = "seqlen-guard-baseline.json"
VERSION = 1


class BaselineError(Exception):
    """A baseline file that cannot be read; the message names the file."""


class Entry(NamedTuple):
    path: str
    """Posix path relative to the baseline's folder."""
    rule: str
    fingerprint: str
    function: str = ""
    """For the reader: where the finding was (the qualified name of its function)."""

    @property
    def key(self) -> tuple[str, str, str]:
        return self.path, self.rule, self.fingerprint

    def describe(self) -> str:
        where = f" in {self.function}" if self.function else ""
        return f"{self.path}: {self.rule}{where}"


def find_baseline(start: Path) -> Path | None:
    """The nearest `seqlen-guard-baseline.json` at or above `start`, found as the config is."""
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / DEFAULT_NAME
        if candidate.is_file():
            return candidate
    return None


class Baseline:
    def __init__(self, file: Path, entries: Iterable[Entry]) -> None:
        self.file = file
        self.folder = file.resolve().parent
        self.entries = list(entries)
        self.by_path: dict[str, list[Entry]] = collections.defaultdict(list)
        for entry in self.entries:
            self.by_path[entry.path].append(entry)

    def relative(self, path: str) -> str:
        """`path` as the baseline names it (relative to its folder; `../` for a file outside it)."""
        return Path(os.path.relpath(os.path.abspath(path), self.folder)).as_posix()

    def split(
        self, path: str, findings: Sequence[Finding], fingerprints: Mapping[Finding, str]
    ) -> tuple[list[Finding], list[Finding]]:
        """(new, known): the findings of one file that are not in the baseline, and those that are."""
        entries = self.by_path.get(self.relative(path))
        if not entries:
            return list(findings), []
        left = collections.Counter((entry.rule, entry.fingerprint) for entry in entries)
        new: list[Finding] = []
        known: list[Finding] = []
        for finding in findings:
            keys = [(finding.code, fingerprint) for fingerprint in every_fingerprint(fingerprints, finding)]
            if any(left[key] > 0 for key in keys):
                left.subtract(key for key in keys if left[key] > 0)
                known.append(finding)
            else:
                new.append(finding)
        return new, known

    def stale(
        self, path: str, found: Sequence[Finding], silenced: Sequence[Finding], fingerprints: Mapping[Finding, str]
    ) -> Stale:
        """The entries of one checked file that none of the findings it would report without a baseline
        (`found`) matches: those a silenced finding still matches (suppressed), and the others (fixed)."""
        _, gone = matched_apart(self.by_path.get(self.relative(path), ()), found, fingerprints)
        suppressed, fixed = matched_apart(gone, silenced, fingerprints)
        return Stale(fixed, suppressed)

    def vanished_files(self, scanned: set[str], roots: Sequence[str]) -> list[Entry]:
        """Entries of files under the checked paths that no longer exist (deleted or renamed)."""
        folders = [os.path.abspath(root) for root in roots]
        gone = []
        for path, entries in self.by_path.items():
            absolute = os.path.normpath(self.folder / path)
            if path in scanned or os.path.exists(absolute):
                continue
            if any(absolute == folder or absolute.startswith(folder.rstrip(os.sep) + os.sep) for folder in folders):
                gone.extend(entries)
        return gone


def matched_apart(
    entries: Iterable[Entry], findings: Sequence[Finding], fingerprints: Mapping[Finding, str]
) -> tuple[list[Entry], list[Entry]]:
    """(matched, unmatched): the entries `findings` match and the others, as multisets (a finding of
    several values, written as an entry per value, matches an entry per value)."""
    left = collections.Counter(
        (finding.code, fingerprint) for finding in findings for fingerprint in every_fingerprint(fingerprints, finding)
    )
    matched: list[Entry] = []
    unmatched: list[Entry] = []
    for entry in entries:
        key = (entry.rule, entry.fingerprint)
        if left[key] > 0:
            left[key] -= 1
            matched.append(entry)
        else:
            unmatched.append(entry)
    return matched, unmatched


class Stale(NamedTuple):
    """Entries no reported finding matches any more."""

    fixed: list[Entry]
    """No finding at all matches them (fixed, or the file deleted)."""
    suppressed: list[Entry]
    """A finding that a suppression comment or the configuration silences still matches them."""


def load_baseline(path: str | Path) -> Baseline:
    import json  # only where a baseline is used: a plain run (pre-commit) does without

    file = Path(path)
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except OSError as error:
        raise BaselineError(f"{file}: cannot read the baseline: {error.strerror or error}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BaselineError(f"{file}: not a seqlen-guard baseline (invalid JSON: {error})") from None
    if not isinstance(document, dict) or not isinstance(document.get("findings"), list):
        raise BaselineError(f'{file}: not a seqlen-guard baseline (expected an object with a "findings" list)')
    if document.get("version") != VERSION:
        raise BaselineError(f"{file}: baseline version {document.get('version')!r} (this seqlen-guard reads {VERSION})")
    return Baseline(file, [_entry(item, file) for item in document["findings"]])


def _entry(item: object, file: Path) -> Entry:
    fields = ("path", "rule", "fingerprint")
    if not isinstance(item, dict) or not all(isinstance(item.get(name), str) for name in fields):
        raise BaselineError(f"{file}: a baseline entry needs string fields {', '.join(fields)}: {item!r}")
    return Entry(item["path"], item["rule"], item["fingerprint"], str(item.get("function", "")))


@functools.lru_cache(maxsize=4)
def cached_baseline(path: str) -> Baseline:
    """One load per process (each `-j` worker loads the file once)."""
    return load_baseline(path)


def split_baselined(
    path: str, findings: Sequence[Finding], fingerprints: Mapping[Finding, str], baseline: str | None
) -> tuple[list[Finding], list[Finding]]:
    """(new, known) against the baseline file `baseline`; all new when there is none."""
    if baseline is None or not findings:
        return list(findings), []
    return cached_baseline(baseline).split(path, findings, fingerprints)


def entries_for(baseline: Baseline, findings: Sequence[Finding], fingerprints: Mapping[Finding, str]) -> list[Entry]:
    return [
        Entry(baseline.relative(finding.path), finding.code, fingerprint, finding.function)
        for finding in findings
        for fingerprint in every_fingerprint(fingerprints, finding)
    ]


def write_baseline(file: Path, entries: Iterable[Entry]) -> None:
    """The file, sorted so that its diffs are small; the entries carry no line numbers."""
    ordered = sorted(entries, key=lambda entry: (entry.path, entry.rule, entry.function, entry.fingerprint))
    document = {
        "version": VERSION,
        "tool": "seqlen-guard",
        "about": "findings accepted on adoption; `seqlen-guard --write-baseline` rewrites this file",
        "findings": [entry._asdict() for entry in ordered],
    }
    import json  # see load_baseline

    temporary = file.with_name(f".{file.name}.tmp")
    temporary.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, file)
