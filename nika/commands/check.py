"""``nika check``: check, apply project settings and suppressions, optionally fix, then render.

``--fix`` applies the safe fixes (``--unsafe-fixes`` adds the rest) as minimal text edits and
re-checks until nothing more applies, so a second ``--fix`` changes nothing. A file whose YAML
does not parse is never touched. ``--diff`` prints a unified diff instead of writing; on standard
input (``-``) the fixed text goes to standard output.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from typing import TYPE_CHECKING, Any

from nika.cli_formats import CHECK_FORMATS, add_output_format

if TYPE_CHECKING:
    from checker.project.report import CheckRun, FileReport

MAX_PASSES = 10


def register(sub: Any) -> None:
    c = sub.add_parser(
        "check",
        help="check workflow files statically (no network, no tokens)",
        description="Check workflow files statically: no network, no subprocess, no tokens spent.",
        epilog=(
            "exit status: 0 no finding is an error (warnings fail only with --strict or `strict = true`); "
            "2 at least one error (wins over 1); 1 nothing failed but something could not be checked "
            "(a missing or unreadable path, no workflow file found without --allow-empty, bad usage, "
            "a broken configuration file, an internal error), or --diff showed a change"
        ),
    )
    c.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files, directories (searched recursively for *.nika.yaml and *.nika.yml) or - for stdin",
    )
    add_output_format(c, CHECK_FORMATS, "print findings")
    c.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto", help="colour the text/concise output"
    )
    c.add_argument(
        "--debug", action="store_true", help="print the traceback of an internal error (NIKA-IMPL-001) on stderr"
    )
    c.add_argument("--native-strict", action="store_true", help="native-first findings fail the check")
    c.add_argument(
        "--strict", action="store_true", help="warnings fail the check too (as the `strict = true` setting does)"
    )
    c.add_argument("--fix", action="store_true", help="apply safe fixes in place (stdin: print the fixed text)")
    c.add_argument(
        "--unsafe-fixes", action="store_true", help="with --fix or --diff, also apply fixes that need review"
    )
    c.add_argument("--diff", action="store_true", help="print the fixes as a unified diff instead of applying them")
    c.add_argument("--show-settings", metavar="FILE", help="print the configuration that applies to FILE and exit")
    c.add_argument("--allow-empty", action="store_true", help="exit 0 when the paths hold no workflow file")
    c.add_argument(
        "--certificate",
        action="store_true",
        help=(
            "after each file's findings, print its certificate: plan (waves, width, critical path), cost ceiling, "
            "termination, effects needed vs granted, risk grade (full/concise; json always carries it; prices "
            "from NIKA_PRICES)"
        ),
    )


def run(args: argparse.Namespace) -> int:
    """``nika check``: the collector paused while the checker loads, until the first file is
    checked (:mod:`nika.heap`)."""
    from checker.project.config_files import one_run
    from nika import heap

    with heap.paused(), one_run():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from checker.project.finalize import SettingsError
    from nika.cli_formats import renderer_name

    args.output_format = renderer_name(args.output_format)  # `text` (alias `full`) is the renderer's "full"
    if args.show_settings:
        return _show_settings(args.show_settings)
    if not args.paths:
        print("nika check: give at least one PATH (a file, a directory, or - for stdin)", file=sys.stderr)
        return 1
    if getattr(args, "certificate", False) and args.output_format not in ("full", "concise", "json"):
        print(
            f"nika check: --certificate prints with the text or concise format; {args.output_format} has no place "
            "for it (json always carries the certificate)",
            file=sys.stderr,
        )
        return 1
    try:
        if args.fix or args.diff:
            from nika import heap

            heap.loaded()
            return _fix(args)
        return _check(args)
    except SettingsError as exc:
        print(f"nika: configuration error in {exc}", file=sys.stderr)
        return 1


def _finalize(reports: list[FileReport], args: argparse.Namespace) -> list[FileReport]:
    from checker.project.admission import admit_report

    strict = bool(getattr(args, "strict", False))  # --strict: warnings fail too, whatever the settings say
    out = [admit_report(r, native_strict=args.native_strict, strict=strict).report for r in reports]
    if args.output_format in NOTED:
        out = [_with_extras(r, args) for r in out]
    return out


# the human formats get a note on standard error about extras a run would need; the machine
# formats and the exit status never depend on what is installed
NOTED = ("full", "concise")


def _with_extras(report: FileReport, args: argparse.Namespace) -> FileReport:
    """The report with what a run of its workflow would need that is not installed here (the
    installation is asked once per invocation: with every extra here, no workflow is walked)."""
    compiled = report.compiled
    if compiled is None or compiled.workflow is None:
        return report
    from checker.contracts.extras import lacking, workflow_needs_unmet

    if getattr(args, "_extras_unmet", None) is None:
        args._extras_unmet = workflow_needs_unmet()
    if not args._extras_unmet:
        return report
    from checker.core.records import replace

    found = lacking(compiled.workflow)
    return replace(report, extras_missing=found) if found else report


def extras_note(reports: list[FileReport] | tuple[FileReport, ...]) -> str | None:
    """One line: the extras a run of the checked files needs that this installation lacks."""
    pairs = [(r.path, extra) for r in reports for _, extra in r.extras_missing]
    if not pairs:
        return None
    from checker.contracts.extras import extra as extra_of

    names = list(dict.fromkeys(e for _, e in pairs))
    files = len({p for p, _ in pairs})
    install = " and ".join(f"`{extra_of(n).install}`" for n in names)
    return (
        f"nika check: note: running {'this file' if files == 1 else f'{files} of these files'} needs "
        f"{'an extra' if len(names) == 1 else 'extras'} not installed here ({', '.join(names)}): {install} "
        "(the check itself does not depend on it)"
    )


def _check(args: argparse.Namespace) -> int:
    from checker.project.files import expand
    from checker.project.report import CheckRun

    targets = list(expand(list(args.paths)))
    if not targets and not args.allow_empty:
        print("nika check: no workflow files to check (use --allow-empty to accept that)", file=sys.stderr)
        return 1
    needs_model = args.output_format == "json" or bool(getattr(args, "certificate", False))
    from nika.commands.check_pool import check_targets

    reports = check_targets(targets, keep_model=needs_model, finish=lambda r: _finalize([r], args)[0])
    return _render(CheckRun(tuple(reports)), args)


def _render(run: CheckRun, args: argparse.Namespace, stream: object = None) -> int:
    from nika.output import render

    out = stream or sys.stdout
    color = args.color == "always" or (args.color == "auto" and out.isatty() and "NO_COLOR" not in os.environ)  # type: ignore[attr-defined]
    certificate = args.output_format == "json" or bool(getattr(args, "certificate", False))
    prices = None
    if certificate:  # only then load the certificate code (the plain check's cold start stays as it was)
        from checker.views.certificate import prices_from_env

        prices = prices_from_env(os.environ)
    text = render(run, args.output_format, color=color, certificate=certificate, prices=prices)
    try:
        if out is sys.stdout:
            _write(text, machine=args.output_format in ("json", "sarif"))
        else:
            out.write(text)  # type: ignore[attr-defined]
            out.flush()  # type: ignore[attr-defined]
    except BrokenPipeError:
        _quiet_broken_pipe()
    if (note := extras_note(run.reports)) is not None:
        print(note, file=sys.stderr)
    if getattr(args, "debug", False):
        for report in run.reports:
            for d in report.diagnostics:
                if d.trace:
                    print(f"nika: {report.path}: {d.code} traceback:\n{d.trace}", file=sys.stderr, end="")
    return run.exit_code


def _write(text: str, *, machine: bool) -> None:
    """Write the report to stdout whatever its encoding, and whatever bytes the given paths hold.

    JSON and SARIF always go out as UTF-8, a lone surrogate (an undecodable byte of a file
    name) as a ``\\uXXXX`` escape, so the document stays valid. Text goes out in the terminal's
    encoding: undecodable file-name bytes as they were, other unencodable characters escaped.
    """
    out = sys.stdout
    encoding = "utf-8" if machine else getattr(out, "encoding", None) or "utf-8"
    if machine and not text.isascii():
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError:
        try:
            data = text.encode(encoding, "surrogateescape")
        except UnicodeEncodeError:
            data = text.encode(encoding, "backslashreplace")
    buffer = getattr(out, "buffer", None)
    if buffer is None:  # a StringIO in tests and embedders
        out.write(data.decode(encoding, "replace"))
        return
    out.flush()
    buffer.write(data)
    buffer.flush()


_SURROGATE = re.compile("[\\ud800-\\udfff]")


def _quiet_broken_pipe() -> None:
    """The reader went away (``| head``): stop writing without a traceback at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


# -- --fix ----------------------------------------------------------------------------------


def fix_text(text: str, path: str, base_dir: str | None, *, unsafe: bool, native_strict: bool = False):  # type: ignore[no-untyped-def]
    """Fix ``text`` to a fixed point. Returns ``(new_text, fixed_count, refusal)``; ``refusal`` says
    why nothing was changed (the YAML does not parse), else ``None``."""
    from checker.engine.pipeline import compile_text
    from checker.project.admission import admit
    from checker.project.settings import settings_for
    from checker.rules.support.fixes import apply_fixes

    settings = settings_for(path if path != "<stdin>" else "-")

    def judge(src: str) -> tuple[object, FileReport]:
        compiled = compile_text(src, path, base_dir)
        return compiled, admit(compiled, path, native_strict=native_strict, settings=settings).report

    compiled, report = judge(text)
    if compiled.root is None:  # type: ignore[attr-defined]
        return text, 0, "its YAML does not parse; fix the syntax errors first"
    fixed = 0
    current = text
    for _ in range(MAX_PASSES):
        result = apply_fixes(current, report.diagnostics, unsafe=unsafe)
        if not result.applied or result.text == current:
            break
        candidate, cand_report = judge(result.text)
        if candidate.root is None:  # type: ignore[attr-defined]
            break  # a fix that breaks the YAML is never kept (a bug in that fix)
        current, report = result.text, cand_report
        fixed += len(result.applied)
    return current, fixed, None


def _fix(args: argparse.Namespace) -> int:
    import difflib

    from checker.engine.pipeline import compile_text
    from checker.project.files import compile_path, expand, read_bounded
    from checker.project.report import CheckRun, FileReport

    targets = list(expand(list(args.paths)))
    if not targets and not args.allow_empty:
        print("nika check: no workflow files to check (use --allow-empty to accept that)", file=sys.stderr)
        return 1
    reports: list[FileReport] = []
    diffs: list[str] = []
    stdin_text: str | None = None
    for path, err in targets:
        if err is not None:
            reports.append(FileReport(path, None, (), err))
            continue
        shown = "<stdin>" if path == "-" else path
        base = os.getcwd()  # relative paths the workflow names resolve from here (02)
        try:
            text = read_bounded(path).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            compiled, why = compile_path(path)  # reports the problem exactly as a plain check does
            reports.append(
                FileReport(path, None, (), why)
                if compiled is None
                else FileReport(path, compiled.source, compiled.diagnostics, compiled=compiled)
            )
            continue
        new, count, refusal = fix_text(text, shown, base, unsafe=args.unsafe_fixes, native_strict=args.native_strict)
        if refusal:
            print(f"nika: {shown}: not fixed: {refusal}", file=sys.stderr)
        if count:
            verb = "would fix" if args.diff else "fixed"
            print(f"nika: {shown}: {verb} {count} finding{'s' if count != 1 else ''}", file=sys.stderr)
        if args.diff:
            diffs.extend(difflib.unified_diff(text.splitlines(True), new.splitlines(True), shown, shown))
        elif path == "-":
            stdin_text = new
        elif new != text:
            _replace_file(path, new)
        compiled_new = compile_text(new, shown, base)
        reports.append(FileReport(path, compiled_new.source, compiled_new.diagnostics, compiled=compiled_new))
    run = CheckRun(tuple(_finalize(reports, args)))
    if args.diff:
        try:
            sys.stdout.write("".join(diffs))
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_broken_pipe()
        # as ruff and black do: a diff that shows changes fails a CI gate (1), errors still win (2)
        return run.exit_code or (1 if diffs else 0)
    if stdin_text is not None:
        sys.stdout.write(stdin_text)  # the fixed text is the output; findings go to standard error
        sys.stdout.flush()
        return _render(run, args, sys.stderr)
    return _render(run, args)


def _replace_file(path: str, text: str) -> None:
    """Write ``text`` over ``path`` atomically: a kill or a full disk leaves the old file whole."""
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".nika-fix-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(OSError):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _show_settings(path: str) -> int:
    from checker.project.settings import SettingsError, describe, settings_for

    try:
        settings = settings_for(path)
    except SettingsError as exc:
        print(f"nika: configuration error in {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(describe(settings, path))
    return 0
