"""Precision of a real-code run against the hand-read labels in benchmarks/labels/findings.tsv.

    python benchmarks/real_code.py -o real.json
    python benchmarks/labelled.py real.json            # per package: findings, true, false, unsure
    python benchmarks/labelled.py real.json --causes   # the false ones by cause, most first

A finding is matched to a label by package, file, line and rule (several findings at one key in
order). transformers is left out (its findings are the project's own tests' subject, and are not
labelled one by one). A finding without a label is listed: someone has to read it and add a row.
Label rule: true = a cache class that a supported path can put there returns a tensor and the use
is harmful as bug.md defines; false = only int-length caches reach the line, or it cannot run with
a tensor cache; unsure = the reader could not decide (the reason says why).
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
from pathlib import Path

LABELS = Path(__file__).resolve().parent / "labels" / "findings.tsv"
Key = tuple[str, str, str, str]


def read_labels(path: Path) -> dict[Key, list[dict[str, str]]]:
    labels: dict[Key, list[dict[str, str]]] = collections.defaultdict(list)
    with path.open(newline="") as file:
        for row in csv.DictReader(file, delimiter="\t", quoting=csv.QUOTE_NONE):
            labels[(row["package"], row["file"], row["line"], row["code"])].append(row)
    return labels


def labelled_findings(runs: list[Path], labels: dict[Key, list[dict[str, str]]]) -> list[tuple[dict, dict | None]]:
    matched = []
    for run in runs:
        seen: collections.Counter[Key] = collections.Counter()
        for finding in json.loads(run.read_text())["findings"]:
            if finding["package"] == "transformers":
                continue
            key = (finding["package"], finding["path"], str(finding["line"]), finding["code"])
            rows = labels.get(key, [])
            index = seen[key]
            seen[key] += 1
            matched.append((finding, rows[min(index, len(rows) - 1)] if rows else None))
    return matched


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="JSON written by real_code.py -o")
    parser.add_argument("--causes", action="store_true", help="list the false findings by cause")
    arguments = parser.parse_args()
    matched = labelled_findings(arguments.runs, read_labels(LABELS))
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for finding, row in matched:
        table[finding["package"]][row["label"] if row else "unlabelled"] += 1
    print("| package | findings | true | false | unsure | unlabelled |\n|---|---|---|---|---|---|")
    total: collections.Counter[str] = collections.Counter()
    for package, counts in sorted(table.items()):
        total.update(counts)
        print(f"| {package} | {sum(counts.values())} | " + " | ".join(str(counts[k]) for k in LABEL_KINDS) + " |")
    print(f"| **total** | {sum(total.values())} | " + " | ".join(str(total[k]) for k in LABEL_KINDS) + " |")
    read = total["true"] + total["false"]
    if read:
        print(f"\nfalse findings: {total['false']} of {read} decided ({100 * total['false'] / read:.0f}%)")
    if arguments.causes:
        causes = collections.Counter(
            (row["cause"], finding["package"]) for finding, row in matched if row and row["label"] == "false"
        )
        for (cause, package), count in causes.most_common():
            print(f"{count:4d}  {cause or '(no cause given)'}  {package}")
    for finding, row in matched:
        if row is None:
            print(
                "unlabelled:", finding["package"], finding["path"], finding["line"], finding["code"], finding["message"]
            )
    return 0


LABEL_KINDS = ("true", "false", "unsure", "unlabelled")

if __name__ == "__main__":
    raise SystemExit(main())
