"""``nika run FILE``: a workflow run as four named steps, and its exit code.

* :func:`admit` — compile the file once, refuse what ``nika check`` refuses (its verdict, with the
  project's suppressions and configuration), refuse what this build cannot honour, bind ``--var``
  to ``inputs:`` and judge ``--model``: nothing has happened yet when any of it says no;
* :func:`options` — how to run: the event sinks (progress, ``--events``, OpenTelemetry), the durable
  flags (``--resume`` verified, matched and locked; ``--answer``; ``--max-cost-usd``), trace retention,
  the executor (local, or a Dask session);
* :func:`execute` — the run, with SIGINT/SIGTERM cancelling it (a signal before it began: exit 3,
  nothing ran);
* :func:`render` — the report (JSON, or the summary and the outputs), the notes, the exit code.

``--dry-run`` stops after :func:`admit` with the plan. What a run looks like on a terminal (the plan
text, the progress lines, the summary) is :mod:`nika.output.run_text`.

Exit codes: 0 the workflow succeeded, 1 it failed, 2 it was refused before any effect (``nika
check`` found an error, a ``--var`` does not fit ``inputs:``, a ``--resume`` trace cannot be
resumed, an ``--answer`` is refused), 3 it was cancelled (SIGINT or SIGTERM, from the command's
first statement: :mod:`nika.commands.run_stop`), 4 it paused on a prompt nobody could answer
(``--resume --answer``).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, ParamSpec, TextIO

from nika.cli_formats import add_output_format
from nika.commands.run_console import is_tty, write
from nika.commands.run_durable import Durable

if TYPE_CHECKING:
    from checker.model.workflow import CompiledWorkflow
    from nika.commands.run_sinks import RunSinks
    from runtime.engine.options import Options
    from runtime.engine.records import RunResult

P = ParamSpec("P")
EXIT = {"success": 0, "failure": 1, "cancelled": 3, "paused": 4}
REFUSED = 2
# a larger first generation: a collection runs once per many tasks, not once per few frames
RUN_GC_THRESHOLDS = (50_000, 20, 20)


def register(sub: Any) -> None:
    r = sub.add_parser(
        "run",
        help="run a workflow (refused with exit 2 when `nika check` finds an error)",
        description=(
            "Run a workflow. Exit 0 success, 1 failure, 2 refused before any effect, 3 cancelled, "
            "4 paused on a prompt (resume it with --resume TRACE --answer TASK=VALUE)."
        ),
    )
    r.add_argument("file", metavar="FILE", help="the workflow file (*.nika.yaml or *.nika.yml)")
    add_output_format(r)
    r.add_argument("--var", action="append", default=[], metavar="K=V", help="an input (JSON when it parses)")
    r.add_argument("--model", metavar="PROVIDER/NAME", help="answer every infer: with this model")
    r.add_argument("--dry-run", action="store_true", help="print the plan (waves, edges, effects) and stop")
    r.add_argument("--max-parallel", type=int, metavar="N", help="tasks running at once (default 64)")
    r.add_argument("--trace-dir", metavar="DIR", help="where the run journal goes (default .nika/traces)")
    r.add_argument(
        "--events",
        metavar="ndjson[:PATH|-]",
        help="stream every event as one JSON line as it happens, to PATH or standard output (docs/events.md)",
    )
    r.add_argument(
        "--executor",
        choices=("local", "dask"),
        default=None,
        help="where effects run: in this process (default, or $NIKA_EXECUTOR), or on Dask workers "
        "(pip install 'nika-tools[dask]')",
    )
    r.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="with --executor dask: join this Dask scheduler (default $DASK_SCHEDULER_ADDRESS, else a local cluster)",
    )
    r.add_argument(
        "--no-gc",
        action="store_true",
        help="do not collect old journals before the run (ADR-100 retention: NIKA_TRACE_KEEP/_MAX_AGE/_MAX_SIZE)",
    )
    r.add_argument(
        "--watch",
        action="store_true",
        help="run, then re-run on each save what it changed, reusing the rest (pip install 'nika-tools[watch]')",
    )
    r.add_argument(
        "--debounce",
        type=int,
        metavar="MS",
        help="with --watch: wait for MS milliseconds without a change before re-running (default 200)",
    )
    from nika.commands.run_durable import add_arguments as add_durable_arguments  # stdlib-only at import

    add_durable_arguments(r)


def run(args: Any) -> int:
    if args.watch or args.debounce is not None:
        from nika.commands.run_watch import watch_command

        return watch_command(args, sys.modules[__name__])  # the session takes this module's steps
    return run_command(
        args.file,
        output_format=args.output_format,
        var_pairs=args.var,
        model=args.model,
        dry_run=args.dry_run,
        max_parallel=args.max_parallel,
        trace_dir=args.trace_dir,
        events=args.events,
        gc=not args.no_gc,
        executor=args.executor,
        scheduler=args.scheduler,
        durable=Durable.of(args),
    )


# The steps' records are named tuples, not dataclasses: :mod:`dataclasses` (and the :mod:`inspect`
# it loads) would be most of what a one-task run imports beyond `nika check` (docs/speed.md).
class Flags(NamedTuple):
    """How the run was asked for (the command line's options, or a caller's)."""

    durable: Durable
    model: str | None = None
    max_parallel: int | None = None
    trace_dir: str | None = None
    events: str | None = None
    gc: bool = True
    executor: str | None = None
    scheduler: str | None = None


class Say(NamedTuple):
    """Where the command writes (``out``: the report or the outputs; ``err``: progress and notes) and how."""

    out: TextIO
    err: TextIO
    fmt: str

    def out_text(self, text: str) -> None:
        write(self.out, text)

    def note(self, line: str) -> None:
        write(self.err, f"nika run: note: {line}\n")


class Refused(Exception):
    """The run stops before any effect: why (a message, or the checker's ``verdict``) and the exit code."""

    def __init__(
        self, message: str = "", *, exit_code: int = REFUSED, code: str | None = None, verdict: Any = None
    ) -> None:
        super().__init__(message)
        self.message, self.exit_code, self.code, self.verdict = message, exit_code, code, verdict


class Admitted(NamedTuple):
    """A file the run may start from: compiled once and judged as ``nika check`` judges it, inputs bound."""

    file: str
    compiled: CompiledWorkflow
    inputs: dict[str, Any]


class Prepared(NamedTuple):
    """How to run: the engine's options, the event sinks and the executor session (``None``: local)."""

    options: Options
    sinks: RunSinks
    session: Any = None


def _lean_heap(command: Callable[P, int]) -> Callable[P, int]:
    """The collector paused while the file compiles (a tree of long-lived objects, no garbage
    cycles worth a pass), until the run starts (:mod:`nika.heap`)."""

    @functools.wraps(command)
    def lean(*args: P.args, **kwargs: P.kwargs) -> int:
        from nika import heap

        with heap.paused():
            return command(*args, **kwargs)

    return lean


def _stoppable(command: Callable[P, int]) -> Callable[P, int]:
    """SIGINT and SIGTERM cancel the command from its first statement (:mod:`nika.commands.run_stop`):
    taken here when the command line did not take them already, and given back after."""

    @functools.wraps(command)
    def stoppable(*args: P.args, **kwargs: P.kwargs) -> int:
        from nika.commands import run_stop

        mine = None if run_stop.current() is not None else run_stop.install()
        try:
            return command(*args, **kwargs)
        finally:
            run_stop.uninstall(mine)

    return stoppable


@_stoppable
@_lean_heap
def run_command(
    file: str,
    *,
    output_format: str = "text",
    var_pairs: list[str] | None = None,
    dry_run: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
    durable: Durable | None = None,
    **flags: Any,
) -> int:
    """``nika run``: admit, (``--dry-run``: the plan), options, execute, render."""
    say = Say(out or sys.stdout, err or sys.stderr, output_format)
    how = Flags(durable=durable or Durable(), **flags)
    try:
        admitted = admit(file, var_pairs or [], how.model)
        if dry_run:
            return show_plan(admitted, how.model, say, how.executor)
        prepared = options(admitted, how, say)
    except Refused as why:
        return refuse(say, why)
    except Stopped:
        return cancelled(say)
    if _stopped():  # a signal before the run began: nothing ran, no journal was opened
        close(prepared)
        return cancelled(say)
    return render(admitted, prepared, execute(admitted, prepared), say)


# -- 1. admit ------------------------------------------------------------------------------------


def admit(file: str, var_pairs: list[str], model: str | None) -> Admitted:
    """The compiled file and its bound inputs, or :class:`Refused` (before any effect): the one
    admission (:func:`runtime.engine.admission.admit_file`), worded for the command line."""
    from runtime.engine.admission import NotAdmitted, admit_file
    from runtime.engine.inputs import InputError, parse_vars

    try:
        given = parse_vars(var_pairs)
    except InputError as exc:
        raise Refused(str(exc)) from None
    try:
        compiled, inputs = admit_file(file, given, model)
    except NotAdmitted as exc:
        if exc.stage == "verdict":
            raise Refused(verdict=exc.verdict) from None
        exit_code = 1 if exc.stage in ("compile", "configuration") else REFUSED
        unsupported = exc.message if exc.stage != "unsupported" else f"{file}: {exc.message}"
        raise Refused(unsupported, exit_code=exit_code, code=exc.code) from None
    return Admitted(file, compiled, inputs)


def show_plan(admitted: Admitted, model: str | None, say: Say, executor: str | None = None) -> int:
    """``--dry-run``: the plan (waves, edges, effects), the bound inputs and the extras the run
    needs (which are installed, which tasks need a missing one); nothing runs."""
    from nika.commands.extras import plan_extras, plan_extras_text
    from nika.output.run_text import plan, plan_text

    p = plan(admitted.compiled, model)
    p["inputs"] = admitted.inputs
    assert admitted.compiled.workflow is not None  # admitted
    p["extras"] = plan_extras(admitted.compiled.workflow, executor)
    text = plan_text(p) + plan_extras_text(p["extras"]) if say.fmt != "json" else ""
    say.out_text(json.dumps(p, indent=2, default=str) + "\n" if say.fmt == "json" else text)
    return 0


# -- 2. options ----------------------------------------------------------------------------------


def options(admitted: Admitted, how: Flags, say: Say) -> Prepared:
    """How to run; raises :class:`Refused` (an extra a task needs and the installation lacks, a
    bad ``--events``, durable flags that cannot be honoured, an executor that cannot be had), still
    before any effect."""
    import os

    from nika.commands.extras import refusal
    from nika.commands.run_console import progress_view
    from nika.commands.run_durable import DurableRefused, options_for, tty_prompter
    from nika.commands.run_executor import dask_session
    from nika.commands.run_sinks import UsageError, build_sinks
    from runtime.engine.options import DEFAULT_MAX_PARALLEL, Options

    assert admitted.compiled.workflow is not None  # admitted
    if (lacking := refusal(admitted.compiled.workflow, how.executor)) is not None:
        raise Refused(f"{admitted.file}: {lacking} [NIKA-IMPL-002]", code="NIKA-IMPL-002")
    durable = _with_project_cap(how.durable, admitted.file)
    try:
        sinks = build_sinks(how.events, say.fmt, progress_view(say.fmt, say.err), os.environ, say.out)
    except UsageError as exc:
        raise Refused(str(exc), exit_code=1) from None
    for line in sinks.notes:
        say.note(line)
    trace_path = Path(how.trace_dir) if how.trace_dir else Path(".nika/traces")
    if _stopped():
        sinks.fanout.close()
        raise Stopped
    interactive = say.fmt == "text" and is_tty(sys.stdin) and is_tty(say.err)
    try:  # --resume verified, matched and locked before any effect; --answer judged and spent; --task judged
        extra = options_for(durable, admitted.compiled, how.model, trace_path, interactive=interactive)
    except DurableRefused as exc:
        sinks.fanout.close()
        raise Refused(str(exc)) from None
    for line in extra["resume"].notes if extra.get("resume") else []:
        say.note(line)
    if how.gc and not durable.resume and (line := _gc_at_start(trace_path)):  # ADR-100 D2: bounded, never silently
        write(say.err, line + "\n")
    opts = Options(
        max_parallel=how.max_parallel or DEFAULT_MAX_PARALLEL,
        model=how.model,
        trace_dir=trace_path,
        interactive=interactive,
        on_event=sinks.fanout,
        call_stack=(),
        prompter=tty_prompter(say.err) if interactive else None,
        **extra,
    )
    try:
        session = dask_session(how.executor, how.scheduler, say.err, deterministic=_deterministic(admitted.compiled))
    except ValueError as exc:
        sinks.fanout.close()
        if opts.resume is not None:
            opts.resume.release()
        raise Refused(str(exc), exit_code=1) from None
    if session is not None:
        opts.executor = session.executor
    return Prepared(opts, sinks, session)


def _deterministic(compiled: CompiledWorkflow) -> bool:
    from runtime.determinism import Determinism

    assert compiled.workflow is not None
    return Determinism.of(compiled.workflow.run).deterministic


def _with_project_cap(durable: Durable, file: str) -> Durable:
    """The project's ``max-cost-usd`` setting, when ``--max-cost-usd`` does not say."""
    if durable.max_cost_usd is not None:
        return durable
    from checker.project.settings import settings_for

    return durable.replace(max_cost_usd=settings_for(file).max_cost_usd)


def _gc_at_start(trace_dir: Path) -> str | None:
    import os

    from runtime.journal.retention import collect_at_start

    return collect_at_start(trace_dir, os.environ)


# -- 3. execute ----------------------------------------------------------------------------------


def execute(admitted: Admitted, prepared: Prepared) -> RunResult:
    """The run, in the working directory (relative paths resolve from it, 02, not from the file's
    folder); the executor session is closed and a resume's lock released whatever happens."""
    import asyncio

    from nika import heap

    heap.loaded(RUN_GC_THRESHOLDS)  # what is loaded and compiled lives as long as the run
    from nika.commands import run_stop

    box: list[RunResult] = []
    try:
        asyncio.run(_run(admitted, prepared.options, Path.cwd(), box))
    finally:
        if (stop := run_stop.current()) is not None:
            stop.detach()  # the run has its verdict
        if prepared.session is not None:
            prepared.session.close()
        if prepared.options.resume is not None:
            prepared.options.resume.release()
    return box[0]


def close(prepared: Prepared) -> None:
    """What :func:`options` opened, closed without a run (a signal came first)."""
    if prepared.session is not None:
        prepared.session.close()
    if prepared.options.resume is not None:
        prepared.options.resume.release()
    prepared.sinks.fanout.close()


async def _run(admitted: Admitted, options: Options, workdir: Path, box: list[RunResult]) -> None:
    """Run the workflow; the result goes into ``box``, not out as the main task's result:
    ``asyncio.run`` formats ``repr()`` of its main task when it restores the SIGINT handler, and
    the repr of a finished task holds its result's, the whole run's (tens of ms for 1,000 tasks)."""
    import asyncio

    from nika.commands import run_stop
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    run = Run(admitted.compiled, admitted.inputs, options, verbs=VERBS, workdir=workdir)
    running = asyncio.ensure_future(run.execute())
    stop = run_stop.current()
    if stop is not None:  # SIGINT/SIGTERM cancel the run on this loop (a signal already received: at once)
        stop.attach(asyncio.get_running_loop(), run.cancel)
    try:
        box.append(await running)
    finally:
        if stop is not None:
            stop.detach()


class Stopped(Exception):
    """A signal arrived before the run began: nothing ran."""


def _stopped() -> bool:
    from nika.commands import run_stop

    stop = run_stop.current()
    return stop is not None and stop.requested


def cancelled(say: Say) -> int:
    """A signal before the run began: exit 3, nothing ran (the journal opens at the run's first frame)."""
    from nika.commands import run_stop

    stop = run_stop.current()
    why = f"cancelled by {stop.name if stop is not None else 'a signal'} before the run started: nothing ran"
    if say.fmt == "json":
        doc = {"workflow_state": "cancelled", "tasks": {}, "outputs": {}, "events": [], "error": None, "trace": None}
        say.out_text(json.dumps({**doc, "note": why}) + "\n")
    write(say.err, f"nika run: {why}\n")
    return EXIT["cancelled"]


# -- 4. render -----------------------------------------------------------------------------------


def render(admitted: Admitted, prepared: Prepared, result: RunResult, say: Say) -> int:
    """The report (json), or the summary on stderr and the outputs on stdout (text); the notes; the exit code."""
    import os

    from nika.output.run_text import summary_text

    for line in prepared.session.notes() if prepared.session is not None else []:  # e.g. a lost scheduler
        say.note(line)
    report = result.report()
    if say.fmt == "json" or report.get("cost_usd", 0) != 0:  # where the summary shows it
        from runtime.providers.cost import static_bound

        report["cost_bound"] = static_bound(admitted.compiled, os.environ)  # the certificate's worst case
    if say.fmt == "json":
        say.out_text(json.dumps(report, default=str) + "\n")
    else:
        write(say.err, summary_text(report, admitted.file))
        if not prepared.sinks.events_on_stdout:  # else stdout is the stream; its terminal event carries the outputs
            say.out_text(json.dumps(report["outputs"], indent=2, ensure_ascii=False, default=str) + "\n")
    for line in [result.trace_error, *prepared.sinks.fanout.close()]:
        if line:
            say.note(line)
    return EXIT[result.workflow_state]


def refuse(say: Say, why: Refused) -> int:
    """Say why the run was refused (json: a report with no task; text: the findings or one line)."""
    if why.verdict is not None:
        return _refuse_findings(say, why.verdict)
    if say.fmt == "json":
        doc = {
            "workflow_state": "refused",
            "tasks": {},
            "outputs": {},
            "events": [],
            "error": {"code": why.code, "message": why.message},
            "findings": [],
            "trace": None,
        }
        say.out_text(json.dumps(doc) + "\n")
    write(say.err, f"nika run: {why.message}\n")
    return why.exit_code


def _refuse_findings(say: Say, verdict: Any) -> int:
    from checker.project.report import CheckRun
    from nika.output import render as render_check

    check = CheckRun((verdict.report,))
    if say.fmt != "json":
        write(say.err, render_check(check, "full", color=False))
        write(say.err, "nika run: refused before any effect; fix the errors above (`nika check` shows the same)\n")
        return REFUSED
    findings = json.loads(render_check(check, "json"))["reports"][0]["findings"]
    failing = ("error", "warning") if verdict.report.strict else ("error",)
    first = next((f for f in findings if f.get("severity") in failing), None)
    error = {"code": first.get("code"), "message": first.get("message")} if first else None
    doc = {"workflow_state": "refused", "tasks": {}, "outputs": {}, "events": [], "error": error}
    say.out_text(json.dumps({**doc, "findings": findings, "trace": None}) + "\n")
    return REFUSED
