"""``nika decide BUNDLE SNAPSHOT``: the decision kernel on two JSON files (spec 11).

Prints the Decision Receipt as canonical JSON on standard output. Exit 0 for any outcome (defer and
human_required are successful evaluations), 2 when the kernel refuses (NIKA-DECIDE-001/002), 1 when
a file cannot be read.
"""

from __future__ import annotations

import sys
from pathlib import Path


def run(bundle_path: str, snapshot_path: str) -> int:
    from checker.decide import BUNDLE_CODE, SNAPSHOT_CODE, DecideError, evaluate
    from checker.decide.canonical import canonical_json
    from checker.decide.load import load_json

    docs = []
    for path, code, what in ((bundle_path, BUNDLE_CODE, "the bundle"), (snapshot_path, SNAPSHOT_CODE, "the snapshot")):
        try:
            data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
        except OSError as e:
            print(f"nika decide: cannot read {path}: {e.strerror or e}", file=sys.stderr)
            return 1
        try:
            docs.append(load_json(data, code, f"{what} {path}"))
        except DecideError as e:
            print(f"nika decide: error[{e.code}] {e}", file=sys.stderr)
            return 2
    try:
        receipt = evaluate(docs[0], docs[1])
    except DecideError as e:
        print(f"nika decide: error[{e.code}] {e}", file=sys.stderr)
        return 2
    sys.stdout.write(canonical_json(receipt) + "\n")
    return 0
