"""``nika trace verify|ls|show|outputs|diff|replay|gc|rm|receipt``: the run journal as a tool.

Every subcommand reads journals through :mod:`runtime.journal.read` (one fold, spec 17 §the fold
law); text goes to people, ``--output-format json`` to tools. Exit 0 on success, 1 when a run
cannot be found or read (one line on stderr), 2 when ``rm`` refuses a paused run without
``--force``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from nika.cli_formats import add_output_format

DEFAULT_DIR = Path(".nika/traces")


def _write(out: TextIO, text: str) -> None:
    from checker.core.display import terminal_safe

    try:
        out.write(terminal_safe(text))
        out.flush()
    except BrokenPipeError:
        pass


def _fail(sub: str, message: str) -> int:
    print(f"nika trace {sub}: {message}", file=sys.stderr)
    return 1


def _load(sub: str, name: str, trace_dir: Path) -> Any:
    """The run view of ``name``, or an ``int`` exit code after saying why it cannot be read."""
    from runtime.journal.find import RunNotFound, resolve_run
    from runtime.journal.read import read_run

    try:
        return read_run(resolve_run(name, trace_dir))
    except RunNotFound as exc:
        return _fail(sub, str(exc))
    except OSError as exc:
        return _fail(sub, f"{name}: {(exc.strerror or str(exc)).lower()}")


def _dump(out: TextIO, value: Any) -> None:
    _write(out, json.dumps(value, ensure_ascii=False, default=str) + "\n")


def trace_ls(trace_dir: Path, fmt: str, out: TextIO) -> int:
    """The runs of the folder, by run history (``runtime.journal.history``): each history's attempts
    together, newest first, each with the journal it resumed; ``resume_candidate`` marks, per
    workflow, the journal to resume (the head of its newest history holding the most completed work)."""
    from nika.output.trace_text import ls_text
    from runtime.journal.history import Histories, Member, candidates
    from runtime.journal.retention import read_all

    runs = read_all(trace_dir)
    picked = candidates(runs)
    ms = [Member(r.path, r.prologue, r.started) for r in runs]
    hist = Histories(ms)
    groups: dict[str, list[tuple[Member, Any]]] = {}
    for m, r in zip(ms, runs, strict=True):
        groups.setdefault(hist.history_id(m), []).append((m, r))
    rows = []
    for members in sorted(groups.values(), key=lambda g: max((m.started or 0) for m, _ in g), reverse=True):
        root = members[0][1].run_id
        for m, r in reversed(members):
            parent = hist.parent(m)
            rows.append(
                {
                    **r.summary(),
                    "resume_candidate": r.run_id in picked,
                    "history": hist.history_id(m),
                    "history_root": root,
                    "attempt": m.attempt,
                    "resumed_from": parent.run_id if parent is not None else m.parent_name,
                }
            )
    _dump(out, {"trace_dir": str(trace_dir), "runs": rows}) if fmt == "json" else _write(out, ls_text(rows))
    return 0


def trace_show(name: str, trace_dir: Path, fmt: str, out: TextIO) -> int:
    from nika.output.trace_text import show_text
    from runtime.journal.write import verify

    view = _load("show", name, trace_dir)
    if isinstance(view, int):
        return view
    verdict = verify(view.path.read_bytes(), view.incomplete)
    if fmt == "json":
        _dump(out, {**view.to_json(), "verify": verdict["verdict"]})
    else:
        _write(out, show_text(view, verdict))
    return 0


def trace_outputs(name: str, trace_dir: Path, fmt: str, out: TextIO) -> int:
    from nika.output.trace_text import outputs_text

    view = _load("outputs", name, trace_dir)
    if isinstance(view, int):
        return view
    if fmt == "json":
        doc = view.to_json()
        keys = ("status", "output", "output_recorded")
        tasks = {tid: {k: t[k] for k in keys} for tid, t in doc["task_records"].items()}
        _dump(out, {"run": view.run_id, **{k: doc[k] for k in ("outputs", "outputs_recorded")}, "tasks": tasks})
    else:
        _write(out, outputs_text(view))
    return 0


def trace_diff(name_a: str, name_b: str, trace_dir: Path, fmt: str, out: TextIO) -> int:
    from nika.output.trace_text import diff_text
    from runtime.journal.diff import diff_runs

    a = _load("diff", name_a, trace_dir)
    if isinstance(a, int):
        return a
    b = _load("diff", name_b, trace_dir)
    if isinstance(b, int):
        return b
    d = diff_runs(a, b)
    _dump(out, d) if fmt == "json" else _write(out, diff_text(d))
    return 0


def trace_replay(name: str, trace_dir: Path, fmt: str, out: TextIO) -> int:
    """The progress view the run printed, re-rendered from its events (json: the event stream)."""
    from nika.output.run_text import event_line, summary_text

    view = _load("replay", name, trace_dir)
    if isinstance(view, int):
        return view
    if fmt == "json":
        _write(out, "".join(json.dumps(e, ensure_ascii=False, default=str) + "\n" for e in view.events))
        return 0
    lines = [line for e in view.events if (line := event_line(e)) is not None]
    report = {
        "workflow_state": view.state,
        "tasks": {tid: {"status": t.status} for tid, t in view.tasks.items()},
        "error": {"code": view.error_code, "message": "(see `nika trace show`)"} if view.error_code else None,
        "trace": str(view.path),
    }
    _write(out, "\n".join(lines) + ("\n" if lines else "") + summary_text(report))
    return 0


def trace_gc(trace_dir: Path, fmt: str, out: TextIO, *, dry_run: bool = False) -> int:
    from runtime.journal.retention import Policy, PolicyError, collect, human_size

    try:
        policy = Policy.from_env(os.environ)
    except PolicyError as exc:
        return _fail("gc", str(exc))
    plan = collect(trace_dir, policy, dry_run=dry_run)
    if fmt == "json":
        _dump(out, {"dry_run": dry_run, "policy": policy.to_json(), **plan.to_json()})
    elif plan.removed:
        verb = "would remove" if dry_run else "removed"
        lines = [plan.line().replace("removed", verb, 1)]
        lines += [f"  {why:<11} {r.run_id} ({r.workflow or '?'}, {r.state})" for r, why in plan.removed]
        _write(out, "\n".join(lines) + "\n")
    else:
        _write(out, f"trace gc · nothing to remove · kept {len(plan.kept)} · {human_size(plan.kept_size())}\n")
    return 0


def trace_rm(
    names: list[str], trace_dir: Path, fmt: str, out: TextIO, *, older_than: str | None, all_: bool, force: bool
) -> int:
    from runtime.journal.retention import parse_duration, read_all

    if not names and not older_than and not all_:
        return _fail("rm", "give RUN..., --older-than DURATION or --all")
    targets = []
    for name in names:
        view = _load("rm", name, trace_dir)
        if isinstance(view, int):
            return view
        targets.append(view)
    if older_than or all_:
        try:
            cut = time.time() - parse_duration(older_than) if older_than else None
        except ValueError:
            return _fail("rm", f"--older-than `{older_than}` is not a duration like 30d, 12h or 90m")
        targets += [r for r in read_all(trace_dir) if cut is None or (r.started or 0) / 1e9 < cut]
    paused = [r for r in targets if r.state == "paused"]
    if paused and not force:
        for r in paused:
            why = f"this trace carries an unanswered prompt for task {r.paused_task or '?'}"
            print(f"nika trace rm: {r.run_id}: {why}", file=sys.stderr)
        print("nika trace rm: nothing removed; pass --force to destroy the pending gate", file=sys.stderr)
        return 2
    removed = []
    from runtime.journal.incomplete import remove_mark

    for r in {str(t.path): t for t in targets}.values():
        r.path.unlink(missing_ok=True)
        remove_mark(r.path)
        removed.append(r.run_id)
    _dump(out, {"removed": removed}) if fmt == "json" else _write(out, f"removed {len(removed)} trace(s)\n")
    return 0


def trace_receipt(name: str, trace_dir: Path, fmt: str, out: TextIO, *, workflow: str | None) -> int:
    from checker.views.certificate import prices_from_env
    from nika.output.trace_text import receipt_text
    from runtime.journal.receipt import receipt

    view = _load("receipt", name, trace_dir)
    if isinstance(view, int):
        return view
    r = receipt(view, Path(workflow) if workflow else None, prices_from_env(os.environ))
    _dump(out, r) if fmt == "json" else _write(out, receipt_text(r))
    return 0


def trace_verify(file: str, fmt: str, out: TextIO, trace_dir: Path = DEFAULT_DIR) -> int:
    """Walk a journal's hash chain (the one reader, ``runtime.journal.scan``, with its damage class):
    0 clean, 1 finding, 2 forged (1 also when it cannot be read). ``file``: a path, a run id, a
    unique prefix or ``latest``, as every trace verb takes."""
    from runtime.journal.find import RunNotFound, resolve_run
    from runtime.journal.incomplete import read_mark
    from runtime.journal.write import verify

    try:
        path = resolve_run(file, trace_dir)
        data = path.read_bytes()
    except RunNotFound as exc:
        print(f"nika trace verify: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"nika trace verify: {file}: {(exc.strerror or str(exc)).lower()}", file=sys.stderr)
        return 1
    verdict = verify(data, read_mark(path))
    if fmt == "json":
        _write(out, json.dumps(verdict) + "\n")
    else:
        damage = f", {verdict['damage']}" if verdict["damage"] not in ("whole", "forged") else ""
        lines = [f"{file}: {verdict['verdict']} ({verdict['frames']} frames{damage}, head {verdict['head']})"]
        lines += [f"  line {p['line']}: {p['problem']}" for p in verdict["problems"]]
        _write(out, "\n".join(lines) + "\n")
    return {"clean": 0, "finding": 1, "forged": 2}[verdict["verdict"]]


# -- the command line -------------------------------------------------------------------------

SUBCOMMANDS = ("ls", "show", "outputs", "diff", "replay", "reproduce", "gc", "rm", "receipt", "verify")


def register(sub: Any) -> None:
    t = sub.add_parser("trace", help="work with run journals")
    tsub = t.add_subparsers(dest="trace_command", metavar="SUBCOMMAND")
    tv = tsub.add_parser("verify", help="walk a journal's hash chain: clean, finding or forged")
    tv.add_argument("file", metavar="RUN", help="a journal path, a run id or a unique prefix (or `latest`)")
    tv.add_argument("--trace-dir", metavar="DIR", help="where journals are (default .nika/traces)")
    add_output_format(tv)
    add_parsers(tsub)


def add_parsers(tsub: Any) -> None:
    """The ``nika trace`` subcommands that read the trace folder."""

    def sub(name: str, help_: str, *runs: str) -> Any:
        p = tsub.add_parser(name, help=help_, description=help_)
        for r in runs:
            p.add_argument(r, metavar=r.upper(), help="a journal path, a run id or a unique prefix (or `latest`)")
        p.add_argument("--trace-dir", metavar="DIR", help="where journals are (default .nika/traces)")
        add_output_format(p)
        return p

    sub("ls", "list the runs in the trace folder: workflow, state, start, duration, tasks, cost")
    sub("show", "a run's tasks (model and tool calls, failures with codes) and a timeline", "run")
    sub("outputs", "a run's workflow outputs and every task's output", "run")
    sub("diff", "which tasks changed status, input, output, cost or tokens between two runs", "run_a", "run_b")
    sub("replay", "re-render a run's progress view from its journal (json: the event stream)", "run")
    rp = sub(
        "reproduce",
        "run a recorded deterministic run again and report the first frame whose bytes differ (NEP-0010)",
        "run",
    )
    rp.add_argument("--workflow", metavar="FILE", help="the workflow file (default: the one the journal names)")
    gc = sub("gc", "collect old journals by the ADR-100 retention rules (paused runs and the newest are kept)")
    gc.add_argument("--dry-run", action="store_true", help="say what would be removed; remove nothing")
    rm = sub("rm", "remove journals (a paused run only with --force)")
    rm.add_argument("runs", nargs="*", metavar="RUN")
    rm.add_argument("--older-than", metavar="DURATION", help="every journal older than this (30d, 12h, 90m)")
    rm.add_argument("--all", action="store_true", help="every journal in the trace folder")
    rm.add_argument("--force", action="store_true", help="also remove paused runs (destroys their pending gate)")
    rc = sub("receipt", "the run's receipt (spec 15): certificate, trace verdict, assertions, lock digest", "run")
    rc.add_argument("--workflow", metavar="FILE", help="the workflow file (default: the one the journal names)")


def run(args: Any, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    cmd = args.trace_command
    fmt = getattr(args, "output_format", "text")
    d = Path(args.trace_dir) if getattr(args, "trace_dir", None) else DEFAULT_DIR
    if cmd == "verify":
        return trace_verify(args.file, fmt, out, d)
    if cmd == "ls":
        return trace_ls(d, fmt, out)
    if cmd == "show":
        return trace_show(args.run, d, fmt, out)
    if cmd == "outputs":
        return trace_outputs(args.run, d, fmt, out)
    if cmd == "diff":
        return trace_diff(args.run_a, args.run_b, d, fmt, out)
    if cmd == "replay":
        return trace_replay(args.run, d, fmt, out)
    if cmd == "reproduce":
        from nika.commands.trace_reproduce import reproduce

        return reproduce(args.run, d, fmt, out, workflow=args.workflow)
    if cmd == "gc":
        return trace_gc(d, fmt, out, dry_run=args.dry_run)
    if cmd == "rm":
        return trace_rm(args.runs, d, fmt, out, older_than=args.older_than, all_=args.all, force=args.force)
    if cmd == "receipt":
        return trace_receipt(args.run, d, fmt, out, workflow=args.workflow)
    print(f"nika trace: give a subcommand: {' | '.join(SUBCOMMANDS)}", file=sys.stderr)
    return 1
