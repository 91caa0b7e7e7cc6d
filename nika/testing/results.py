"""How ``nika test`` reports: a pytest-like terminal summary and JUnit XML for CI."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TextIO

from nika.testing.runner import CaseResult

_MARK = {"passed": ".", "failed": "F", "error": "E"}
_WORD = {"passed": "PASSED", "failed": "FAILED", "error": "ERROR"}


def terminal(
    results: list[CaseResult], collect_errors: list[str], seconds: float, out: TextIO, *, verbose: bool
) -> None:
    by_file: dict[Path, list[CaseResult]] = {}
    for r in results:
        by_file.setdefault(r.file, []).append(r)
    n = len(results)
    out.write(f"collected {n} case{'s' if n != 1 else ''} in {len(by_file)} file{'s' if len(by_file) != 1 else ''}\n")
    for file, rs in by_file.items():
        if verbose:
            for r in rs:
                out.write(f"{r.id} {_WORD[r.outcome]} ({r.seconds * 1000:.0f} ms)\n")
        else:
            out.write(f"{file} {''.join(_MARK[r.outcome] for r in rs)}\n")
    for message in collect_errors:
        out.write(f"ERROR collecting {message}\n")
    bad = [r for r in results if r.outcome != "passed"]
    if bad:
        out.write("\n")
    for r in bad:
        out.write(f"{_WORD[r.outcome]} {r.id}\n")
        for p in r.problems:
            out.write(f"  {p}\n")
    out.write(summary_line(results, collect_errors, seconds) + "\n")


def summary_line(results: list[CaseResult], collect_errors: list[str], seconds: float) -> str:
    counts = Counter(r.outcome for r in results)
    parts = [f"{counts[k]} {k}" for k in ("failed", "passed") if counts[k]]
    errors = counts["error"] + len(collect_errors)
    if errors:
        parts.append(f"{errors} error{'s' if errors != 1 else ''}")
    return f"{', '.join(parts) or 'no cases ran'} in {seconds:.2f}s"


def junit_xml(results: list[CaseResult], collect_errors: list[str], seconds: float) -> str:
    """One ``<testsuite>`` per test file, one ``<testcase>`` per case (classname: the file)."""
    import xml.etree.ElementTree as ET

    counts = Counter(r.outcome for r in results)
    root = ET.Element(
        "testsuites",
        name="nika test",
        tests=str(len(results) + len(collect_errors)),
        failures=str(counts["failed"]),
        errors=str(counts["error"] + len(collect_errors)),
        time=f"{seconds:.3f}",
    )
    by_file: dict[Path, list[CaseResult]] = {}
    for r in results:
        by_file.setdefault(r.file, []).append(r)
    for file, rs in by_file.items():
        c = Counter(r.outcome for r in rs)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=str(file),
            tests=str(len(rs)),
            failures=str(c["failed"]),
            errors=str(c["error"]),
            time=f"{sum(r.seconds for r in rs):.3f}",
        )
        for r in rs:
            case = ET.SubElement(suite, "testcase", classname=str(file), name=r.case.name, time=f"{r.seconds:.3f}")
            if r.outcome != "passed":
                tag = "failure" if r.outcome == "failed" else "error"
                node = ET.SubElement(case, tag, message=r.problems[0] if r.problems else r.outcome)
                node.text = "\n".join(r.problems)
    if collect_errors:
        suite = ET.SubElement(root, "testsuite", name="collection", tests=str(len(collect_errors)), errors="1")
        for message in collect_errors:
            case = ET.SubElement(suite, "testcase", classname="collection", name=message.split(":", 1)[0])
            ET.SubElement(case, "error", message=message).text = message
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
