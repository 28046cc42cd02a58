"""Reads the station's /metrics samples with the prometheus-client
package's OpenMetrics parser (an implementation other than the one that
wrote them) and checks them against the metric table of docs/station.md.

    metrics_check.py DOC STILL SAMPLE...

DOC      docs/station.md: every `linklab_...` name in the rows of its
         metrics table (rows starting "| `linklab_") must be a family in
         every SAMPLE, of the type the table gives.
STILL    comma-separated family names not expected to move in this run
         (the caller says why); may be empty.
SAMPLE   files, in the order taken. Every counter family of the table not
         in STILL must move: some series (labels) has a higher value in a
         later sample than in an earlier one (absent counts as 0).

Prints one line per family and exits 1 if any check fails.
"""

import re
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families


def documented(doc):
    rows = {}
    for line in open(doc, encoding="utf-8"):
        m = re.match(r"\|\s*`(linklab_[a-z0-9_]+)`\s*\|\s*(counter|gauge)\s*\|", line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def families(path):
    text = open(path, encoding="utf-8").read()
    out = {}
    for family in text_string_to_metric_families(text):
        values = {}
        for s in family.samples:
            # A counter's family is named without _total; its samples with.
            if family.type == "counter" and not s.name.endswith("_total"):
                continue
            values[tuple(sorted(s.labels.items()))] = s.value
        out[family.name] = (family.type, values)
    return out


def main():
    doc, still, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    still = {s for s in still.split(",") if s}
    table = documented(doc)
    if not table:
        print(f"no metric table in {doc}")
        return 1
    samples = [families(p) for p in paths]
    failed = 0
    for name, kind in sorted(table.items()):
        family = name[: -len("_total")] if kind == "counter" else name
        missing = [p for p, f in zip(paths, samples) if family not in f]
        if missing:
            print(f"FAIL {name}: not in {', '.join(missing)}")
            failed += 1
            continue
        types = {f[family][0] for f in samples}
        if types != {kind}:
            print(f"FAIL {name}: type {types}, the docs say {kind}")
            failed += 1
            continue
        if kind != "counter":
            print(f"ok   {name}: present ({kind})")
            continue
        moved = any(
            value > samples[i][family][1].get(labels, 0.0)
            for i in range(len(samples))
            for later in samples[i + 1 :]
            for labels, value in later[family][1].items()
        )
        if moved:
            print(f"ok   {name}: present, moves")
        elif name in still:
            print(f"ok   {name}: present, still (expected in this run)")
        else:
            print(f"FAIL {name}: present but does not move")
            failed += 1
    unknown = still - set(table)
    if unknown:
        print(f"FAIL still-list names not in the docs: {sorted(unknown)}")
        failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
