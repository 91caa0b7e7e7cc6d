"""The event sinks ``nika run`` composes: the console progress view, ``--events ndjson[:PATH|-]``
and OpenTelemetry (switched on by the standard ``OTEL_EXPORTER_OTLP_*`` variables)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TextIO

from checker.core.records import field, record
from runtime.telemetry.event_sinks import Fanout, NdjsonSink, UsageError, parse_events


@record(frozen=False, slots=False)
class RunSinks:
    fanout: Fanout
    events_on_stdout: bool = False
    notes: list[str] = field(default_factory=list)  # said before the run (telemetry left off, and why)


def build_sinks(
    events: str | None,
    output_format: str,
    progress: Callable[[dict[str, Any]], None] | None,
    env: Mapping[str, str],
    stdout: TextIO,
) -> RunSinks:
    """The sinks of one run; raises :class:`UsageError` for a bad ``--events`` (before any effect)."""
    sinks: list[tuple[str, Callable[[dict[str, Any]], None]]] = []
    if progress is not None:
        sinks.append(("the progress view", progress))
    on_stdout = False
    if events is not None:
        path = parse_events(events)
        on_stdout = path is None
        if on_stdout and output_format == "json":
            raise UsageError(
                "--events ndjson:- and --output-format json both write to standard output; "
                "send the events to a file (--events ndjson:PATH)"
            )
        sinks.append(("the event stream", NdjsonSink(stdout) if path is None else NdjsonSink.open(path)))
    notes: list[str] = []
    otel = _otel(env, notes)
    if otel is not None:
        sinks.append(("telemetry", otel))
    return RunSinks(Fanout(sinks), on_stdout, notes)


def _otel(env: Mapping[str, str], notes: list[str]) -> Any:
    from runtime.telemetry.otel_sink import OtelConfigError, otel_endpoint

    try:
        if otel_endpoint(env) is None:  # checked before the SDK is imported: off costs nothing
            return None
        from runtime.telemetry.otel_sink import sink_from_env

        return sink_from_env(env)
    except OtelConfigError as exc:
        notes.append(f"telemetry off: {exc}")
    except ImportError as exc:
        from checker.contracts.extras import extra

        notes.append(
            f"telemetry off: the OpenTelemetry SDK is not installed ({exc.name} is missing): {extra('otel').install}"
        )
    return None
