"""``nika run`` and ``nika trace verify``: admission, the run, and the exit code.

Exit codes: 0 the workflow succeeded, 1 it failed, 2 it was refused before any effect (``nika
check`` found an error, a ``--var`` does not fit ``inputs:``, a ``--resume`` trace cannot be
resumed), 3 it was cancelled, 4 it paused on a prompt nobody could answer (``--resume --answer``).
"""

from __future__ import annotations

import asyncio
import functools
import json
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TextIO

P = ParamSpec("P")


def _lean_heap(command: Callable[P, int]) -> Callable[P, int]:
    """The collector paused while the file compiles (a tree of long-lived objects, no garbage
    cycles worth a pass), until the run starts (:mod:`nika.heap`)."""

    @functools.wraps(command)
    def lean(*args: P.args, **kwargs: P.kwargs) -> int:
        from nika import heap

        with heap.paused():
            return command(*args, **kwargs)

    return lean


EXIT = {"success": 0, "failure": 1, "cancelled": 3, "paused": 4}
REFUSED = 2


@_lean_heap
def run_command(
    file: str,
    *,
    output_format: str = "text",
    var_pairs: list[str] | None = None,
    model: str | None = None,
    dry_run: bool = False,
    max_parallel: int | None = None,
    trace_dir: str | None = None,
    events: str | None = None,
    gc: bool = True,
    executor: str | None = None,
    scheduler: str | None = None,
    durable: Any = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    from checker.project.admission import admit, model_option
    from checker.project.finalize import SettingsError
    from runtime.guard.admission import InputError, bind_inputs, compile_file, parse_vars, unsupported_run_block

    out = out or sys.stdout
    err = err or sys.stderr
    compiled, why = compile_file(file)
    if compiled is None:
        return _refuse(out, err, output_format, f"{file}: {why}", [], exit_code=1)
    try:  # the verdict `nika check` gives this file: its suppressions and configuration applied
        verdict = admit(compiled, file)
    except SettingsError as exc:
        return _refuse(out, err, output_format, f"configuration error in {exc}", [], exit_code=1)
    if verdict.refused or compiled.workflow is None or compiled.graph is None:
        return _refuse_findings(out, err, output_format, verdict)
    wf = compiled.workflow
    unsupported = unsupported_run_block(wf, model)  # `--model` replaces every task's model, as at run
    if unsupported is not None:
        return _refuse(out, err, output_format, f"{file}: {unsupported} [NIKA-IMPL-002]", [])
    try:
        inputs = bind_inputs(wf, parse_vars(var_pairs or []))
    except InputError as exc:
        return _refuse(out, err, output_format, str(exc), [])
    if model is not None and (bad := model_option(model)) is not None:  # judged before the first effect
        return _refuse(out, err, output_format, f"--model `{model}`: {bad.full_message()}", [], code=bad.code)

    from nika.commands.run_durable import Durable, DurableRefused, options_for, tty_prompter

    durable = durable or Durable()
    if durable.max_cost_usd is None:  # the project's `max-cost-usd` setting, when the flag does not say
        from dataclasses import replace

        from checker.project.settings import settings_for

        durable = replace(durable, max_cost_usd=settings_for(file).max_cost_usd)
    if dry_run:
        from nika.commands.extras import plan_extras, plan_extras_text
        from runtime.report import plan, plan_text

        p = plan(compiled, model)
        p["inputs"] = inputs
        p["extras"] = plan_extras(wf, executor)
        text = plan_text(p) + plan_extras_text(p["extras"]) if output_format != "json" else ""
        _write(out, json.dumps(p, indent=2, default=str) + "\n" if output_format == "json" else text)
        return 0
    from nika.commands.extras import refusal

    if (lacking := refusal(wf, executor)) is not None:  # an extra a task needs, before the first effect
        return _refuse(out, err, output_format, f"{file}: {lacking} [NIKA-IMPL-002]", [], code="NIKA-IMPL-002")

    import os

    from nika.commands.run_sinks import UsageError, build_sinks
    from runtime.engine.records import DEFAULT_MAX_PARALLEL, Options
    from runtime.report import StreamLine, event_line, summary_text

    progress = None
    if output_format == "text":
        live = StreamLine(_columns(err)) if _is_tty(err) else None  # streamed tokens: one line rewritten in place

        def progress(event: dict[str, Any]) -> None:
            if event.get("type") == "infer.chunk":
                if live is not None:
                    _write(err, live.chunk(event), controls=live.erase())
                return
            line = event_line(event)
            if line is not None:
                _write(err, line + "\n", controls=live.clear() if live is not None else "")
            elif live is not None and str(event.get("type")).startswith("workflow."):  # before the summary
                _write(err, "", controls=live.clear())

    try:
        sinks = build_sinks(events, output_format, progress, os.environ, out)
    except UsageError as exc:
        return _refuse(out, err, output_format, str(exc), [], exit_code=1)
    for note in sinks.notes:
        _write(err, f"nika run: note: {note}\n")
    on_event = sinks.fanout
    try:  # --resume is verified, matched and locked before any effect
        extra = options_for(durable, compiled, model)
    except DurableRefused as exc:
        sinks.fanout.close()
        return _refuse(out, err, output_format, str(exc), [])
    for line in extra["resume"].notes if extra.get("resume") else []:
        _write(err, f"nika run: note: {line}\n")
    trace_path = Path(trace_dir) if trace_dir else Path(".nika/traces")
    if gc and not durable.resume and (line := _gc_at_start(trace_path)):  # ADR-100 D2: bounded, never silently
        _write(err, line + "\n")
    interactive = output_format == "text" and _is_tty(sys.stdin) and _is_tty(err)
    options = Options(
        max_parallel=max_parallel or DEFAULT_MAX_PARALLEL,
        model=model,
        trace_dir=trace_path,
        interactive=interactive,
        on_event=on_event,
        call_stack=(),
        prompter=tty_prompter(err) if interactive else None,
        **extra,
    )
    try:
        session = _dask_session(executor, scheduler, err)
    except ValueError as exc:
        return _refuse(out, err, output_format, str(exc), [], exit_code=1)
    if session is not None:
        options.executor = session.executor
    workdir = Path.cwd()  # relative paths resolve from the working directory (02), not the file's folder
    box: list[Any] = []
    from nika import heap

    heap.loaded(RUN_GC_THRESHOLDS)  # what is loaded and compiled lives as long as the run
    try:
        asyncio.run(_run(compiled, inputs, options, workdir, box))
    finally:
        if session is not None:
            session.close()
        if options.resume is not None:
            options.resume.release()
    result = box[0]
    report = result.report()
    if output_format == "json" or report.get("cost_usd", 0) != 0:  # where the summary shows it
        from runtime.guard.cost import static_bound

        report["cost_bound"] = static_bound(compiled, os.environ)  # the certificate's worst case, beside the actual
    if output_format == "json":
        _write(out, json.dumps(report, default=str) + "\n")
    else:
        _write(err, summary_text(report, file))
        if not sinks.events_on_stdout:  # else stdout is the stream; its terminal event carries the outputs
            _write(out, json.dumps(report["outputs"], indent=2, ensure_ascii=False, default=str) + "\n")
    for note in [result.trace_error, *sinks.fanout.close()]:
        if note:
            _write(err, f"nika run: note: {note}\n")
    return EXIT[result.workflow_state]


def _dask_session(executor: str | None, scheduler: str | None, err: TextIO) -> Any:
    """The Dask session ``--executor dask`` asks for (``None`` for the local executor); a
    ``ValueError`` with a one-line message when it cannot be had."""
    import os

    executor = executor or os.environ.get("NIKA_EXECUTOR") or "local"
    if executor not in ("local", "dask"):
        raise ValueError(f"NIKA_EXECUTOR is `{executor}`; the executors are `local` and `dask`")
    if executor != "dask":
        if scheduler:
            raise ValueError("--scheduler needs --executor dask")
        return None
    from runtime.engine.dask_executor import DaskSession, DaskUnavailable

    address = scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS") or None
    try:
        session = DaskSession.start(address, env=dict(os.environ))
    except DaskUnavailable as exc:
        raise ValueError(f"--executor dask: {exc}") from None
    where = f"joined {session.address}" if address else f"started a local cluster at {session.address}"
    line = f"nika run: dask: {where} ({session.workers} workers)"
    if session.dashboard:
        line += f"; dashboard {session.dashboard}"
    elif not address:
        line += "; no dashboard (pip install bokeh for one)"
    _write(err, line + "\n")
    return session


# a larger first generation: a collection runs once per many tasks, not once per few frames
RUN_GC_THRESHOLDS = (50_000, 20, 20)


def _columns(stream: Any) -> int:
    """The width of the terminal ``stream`` writes to (80 when it cannot be told)."""
    import os

    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        return 80


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _gc_at_start(trace_dir: Path) -> str | None:
    import os

    from runtime.journal.retention import collect_at_start

    return collect_at_start(trace_dir, os.environ)


async def _run(compiled: Any, inputs: dict[str, Any], options: Any, workdir: Path, box: list[Any]) -> None:
    """Run the workflow; the result goes into ``box``, not out as the main task's result:
    ``asyncio.run`` formats ``repr()`` of its main task when it restores the SIGINT handler, and
    the repr of a finished task holds its result's, the whole run's (tens of ms for 1,000 tasks)."""
    from runtime.engine.run import Run

    run = Run(compiled, inputs, options, workdir=workdir)
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, run.cancel)
        loop.add_signal_handler(signal.SIGTERM, run.cancel)
    except (NotImplementedError, RuntimeError):  # pragma: no cover - non-Unix loops
        pass
    box.append(await run.execute())


def _refuse_findings(out: TextIO, err: TextIO, fmt: str, verdict: Any) -> int:
    from checker.project.report import CheckRun
    from nika.output import render

    check = CheckRun((verdict.report,))
    if fmt == "json":
        findings = json.loads(render(check, "json"))["reports"][0]["findings"]
        failing = ("error", "warning") if verdict.report.strict else ("error",)
        errors = [f for f in findings if f.get("severity") in failing]
        first = errors[0] if errors else None
        _write(
            out,
            json.dumps(
                {
                    "workflow_state": "refused",
                    "tasks": {},
                    "outputs": {},
                    "events": [],
                    "error": {"code": first.get("code"), "message": first.get("message")} if first else None,
                    "findings": findings,
                    "trace": None,
                }
            )
            + "\n",
        )
    else:
        _write(err, render(check, "full", color=False))
        _write(err, "nika run: refused before any effect; fix the errors above (`nika check` shows the same)\n")
    return REFUSED


def _refuse(
    out: TextIO,
    err: TextIO,
    fmt: str,
    message: str,
    findings: list[Any],
    exit_code: int = REFUSED,
    code: str | None = None,
) -> int:
    if fmt == "json":
        doc = {
            "workflow_state": "refused",
            "tasks": {},
            "outputs": {},
            "events": [],
            "error": {"code": code, "message": message},
            "findings": findings,
            "trace": None,
        }
        _write(out, json.dumps(doc) + "\n")
    _write(err, f"nika run: {message}\n")
    return exit_code


def _write(stream: TextIO, text: str, *, controls: str = "") -> None:
    """Everything the run command prints goes through here, escaped for a terminal (``controls``:
    the engine's own cursor controls, written first and unescaped: the live stream line)."""
    from runtime.report import terminal_safe

    try:
        stream.write(controls + terminal_safe(text))
        stream.flush()
    except BrokenPipeError:
        pass


def trace_verify_command(file: str, *, output_format: str = "text", out: TextIO | None = None) -> int:
    from runtime.journal.write import verify

    out = out or sys.stdout
    try:
        data = Path(file).read_bytes()
    except OSError as exc:
        print(f"nika trace verify: {file}: {(exc.strerror or str(exc)).lower()}", file=sys.stderr)
        return 1
    verdict = verify(data)
    if output_format == "json":
        _write(out, json.dumps(verdict) + "\n")
    else:
        lines = [f"{file}: {verdict['verdict']} ({verdict['frames']} frames, head {verdict['head']})"]
        lines += [f"  line {p['line']}: {p['problem']}" for p in verdict["problems"]]
        _write(out, "\n".join(lines) + "\n")
    return {"clean": 0, "finding": 1, "forged": 2}[verdict["verdict"]]
