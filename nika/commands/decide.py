"""``nika decide BUNDLE SNAPSHOT``: the decision kernel on two JSON files (spec 11).

Prints the Decision Receipt as canonical JSON on standard output. Exit 0 for any outcome (defer and
human_required are successful evaluations), 2 when the kernel refuses (NIKA-DECIDE-001/002), 1 when
a file cannot be read.
"""

from __future__ import annotations

import sys
from typing import Any


def register(sub: Any) -> None:
    d = sub.add_parser(
        "decide",
        help="evaluate a decision bundle against an evidence snapshot (prints the receipt as JSON)",
        description="Exit 0 for any outcome, 2 when the bundle or snapshot is refused (NIKA-DECIDE-001/002).",
    )
    d.add_argument("bundle", metavar="BUNDLE", help="a decision bundle JSON file")
    d.add_argument("snapshot", metavar="SNAPSHOT", help="an evidence snapshot JSON file (- for stdin)")


def run(args: Any) -> int:
    return decide(args.bundle, args.snapshot)


def decide(bundle_path: str, snapshot_path: str) -> int:
    from checker.decide import BUNDLE_CODE, SNAPSHOT_CODE, DecideError, evaluate
    from checker.decide.canonical import canonical_json
    from checker.decide.load import load_json

    docs = []
    for path, code, what in ((bundle_path, BUNDLE_CODE, "the bundle"), (snapshot_path, SNAPSHOT_CODE, "the snapshot")):
        from checker.core.reader import FileReadError, read_file
        from checker.parse.nodes import MAX_DOCUMENT_BYTES
        from checker.project.files import NAMED_PIPE_DEADLINE_S

        try:  # the one bounded reader; a path named here may be a pipe (`<(…)`), read under a deadline
            data = (
                sys.stdin.buffer.read()
                if path == "-"
                else read_file(path, MAX_DOCUMENT_BYTES, pipes=True, deadline_s=NAMED_PIPE_DEADLINE_S)
            )
        except FileReadError as e:
            print(f"nika decide: cannot read {path}: {e.reason}", file=sys.stderr)
            return 1
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
