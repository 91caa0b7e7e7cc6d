"""``nika test [PATH…]``: golden-output tests for workflows, run under the mock provider.

Exit codes, as pytest's: 0 every case passed; 1 at least one case failed; 2 a test file or its
workflow could not be used (a collection error: bad YAML, an unknown field, a workflow
``nika check`` refuses), or the run was interrupted (Ctrl-C); 3 an internal error; 4 bad usage;
5 no case was collected.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

if TYPE_CHECKING:
    from nika.testing.runner import CaseResult
    from nika.testing.spec import TestFile

PASSED, FAILED, COLLECT_ERROR, INTERNAL, USAGE, NO_TESTS = 0, 1, 2, 3, 4, 5
EXPECTATION_PREFIXES = ("status:", "error:", "tasks.", "outputs.")
_SKIP_DIRS = {".git", ".hg", ".nika", ".venv", "venv", "node_modules", "__pycache__", ".tox"}


class _PytestLikeParser(argparse.ArgumentParser):
    """``nika test`` usage errors exit 4, as pytest's do (1 means a case failed)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USAGE, f"{self.prog}: error: {message}\n")


def register(sub: Any) -> None:
    t = sub.add_parser(
        "test",
        help="run workflow tests (*.nika-test.yaml) under the mock provider",
        description=(
            "Run the cases of workflow test files (*.nika-test.yaml, *.nika-test.yml; directories searched "
            "recursively, default .) under the mock provider: scripted model replies, mocked task results, "
            "expected statuses and outputs. Nothing leaves the machine and no trace is written."
        ),
        epilog=(
            "exit status (as pytest's): 0 all cases passed; 1 a case failed; 2 a test file or its workflow "
            "could not be used, or interrupted; 3 internal error; 4 bad usage; 5 no case collected"
        ),
    )
    t.__class__ = _PytestLikeParser
    t.add_argument("paths", nargs="*", metavar="PATH", help="test files or directories (default: .)")
    t.add_argument("-k", metavar="TEXT", dest="keyword", help="run only the cases whose FILE::CASE id contains TEXT")
    t.add_argument("-v", "--verbose", action="store_true", help="one line per case")
    t.add_argument("--update", action="store_true", help="rewrite each case's expect: from what the run did")
    t.add_argument("--junit-xml", metavar="FILE", help="also write a JUnit XML report to FILE (for CI)")
    t.add_argument(
        "--watch",
        action="store_true",
        help="run, then re-run the test files a save touches (pip install 'nika-tools[watch]')",
    )
    t.add_argument("--debounce", type=int, default=200, metavar="MS", help="with --watch: quiet time before a re-run")


def run(args: Any) -> int:
    if args.watch:
        if args.update or args.junit_xml:
            print("nika test: --watch does not combine with --update or --junit-xml", file=sys.stderr)
            return USAGE
        from nika.commands.test_watch import watch_tests

        this = sys.modules[__name__]  # the session runs this module's run_tests
        return watch_tests(args.paths, this, keyword=args.keyword, verbose=args.verbose, debounce_ms=args.debounce)
    return run_tests(args.paths, keyword=args.keyword, update=args.update, junit=args.junit_xml, verbose=args.verbose)


def discover(paths: list[str]) -> tuple[list[Path], list[str]]:
    """Test files under ``paths`` (directories searched recursively), and paths that do not exist."""
    from nika.testing.spec import SUFFIXES

    found: list[Path] = []
    missing: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                found += [Path(root) / f for f in sorted(files) if f.endswith(SUFFIXES)]
        else:
            missing.append(p)
    return found, missing


def run_tests(
    paths: list[str],
    *,
    keyword: str | None = None,
    update: bool = False,
    junit: str | None = None,
    verbose: bool = False,
    out: TextIO | None = None,
) -> int:
    from nika.testing import results as report
    from nika.testing.runner import run_file
    from nika.testing.spec import SUFFIXES, SpecError, is_test_file, load

    out = out or sys.stdout
    t0 = time.monotonic()
    files, missing = discover(paths or ["."])
    errors = [f"{m}: no such file or directory" for m in missing]
    errors += [
        f"{f}: not a test file (the name must end in {' or '.join(SUFFIXES)})" for f in files if not is_test_file(f)
    ]
    tests: list[TestFile] = []
    for f in (f for f in files if is_test_file(f)):
        try:
            tests.append(load(f))
        except SpecError as exc:
            errors.append(str(exc))
    results: list[CaseResult] = []
    for test in tests:
        if keyword:
            test.cases = [c for c in test.cases if keyword in f"{test.path}::{c.name}"]
        if not test.cases:
            continue
        try:
            file_results = run_file(test)
        except KeyboardInterrupt:
            print(f"nika test: interrupted in {test.path}", file=sys.stderr)
            return COLLECT_ERROR
        results += file_results
        if update:
            changed = _update(test, file_results)
            if changed:
                out.write(f"updated {changed} case{'s' if changed != 1 else ''} in {test.path}\n")
    seconds = time.monotonic() - t0
    report.terminal(results, errors, seconds, out, verbose=verbose)
    if junit:
        try:
            Path(junit).write_text(report.junit_xml(results, errors, seconds), encoding="utf-8")
        except OSError as exc:
            print(f"nika test: --junit-xml {junit}: {(exc.strerror or str(exc)).lower()}", file=sys.stderr)
            return USAGE
    if any(r.internal for r in results):
        return INTERNAL
    if errors or any(r.outcome == "error" for r in results):
        return COLLECT_ERROR
    if not results:
        return NO_TESTS
    return FAILED if any(r.outcome == "failed" for r in results) else PASSED


def _update(test: TestFile, results: list[CaseResult]) -> int:
    from nika.testing.update import rewrite

    changed = rewrite(test, results)
    for r in results:  # the file now says what the run did; only an unused script still fails
        if r.outcome == "failed":
            r.problems = [p for p in r.problems if not p.startswith(EXPECTATION_PREFIXES)]
            r.outcome = "failed" if r.problems else "passed"
    return changed
