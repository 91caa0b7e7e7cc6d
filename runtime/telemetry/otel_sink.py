"""OpenTelemetry export of a run: an event sink that turns the run's events into spans.

One trace per run: a root span for the workflow, a span per task with a child span per attempt,
and under the attempt a span per model call (GenAI semantic conventions: ``gen_ai.operation.name``
``chat``, ``gen_ai.provider.name``, ``gen_ai.request.model``, ``gen_ai.usage.input_tokens`` /
``output_tokens``) and per tool call (``execute_tool``, ``gen_ai.tool.name``). Span times are the
events' own timestamps (a model call's span starts ``duration_ms`` before its event), so the same
sink renders a live run or a journal read back. Task status sets span status: ``success`` OK,
``failure`` ERROR with the code, ``skipped``/``cancelled`` unset with ``nika.task.status``.

Off by default; on when ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT``
is set (and neither ``OTEL_SDK_DISABLED=true`` nor ``OTEL_TRACES_EXPORTER=none``), exporting
OTLP/HTTP protobuf. The events reach the sink through the run's redactor (runtime/guard/redact.py),
so a secret is masked in every span as in the journal. Telemetry never slows or fails the run:
spans leave on the SDK's background thread, and at the end the sink waits at most
``flush_timeout_s`` for them (a down or silent endpoint costs that bound, once, after the run:
1 s, or ``OTEL_EXPORTER_OTLP_TIMEOUT`` seconds up to 10).

The SDK is imported only when export is switched on: ``nika check`` never loads it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

DEFAULT_FLUSH_TIMEOUT_S = 1.0
MAX_TIMEOUT_S = 10.0
DEFAULT_SERVICE = "nika"


class OtelConfigError(ValueError):
    """An OTEL_* setting this build cannot honour (said once, the run goes on without export)."""


def otel_endpoint(env: Mapping[str, str]) -> str | None:
    """The OTLP/HTTP traces URL the standard variables ask for, or ``None`` when export is off."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return None
    exporters = {e.strip() for e in env.get("OTEL_TRACES_EXPORTER", "otlp").lower().split(",")}
    if "otlp" not in exporters:
        raise OtelConfigError(f"OTEL_TRACES_EXPORTER `{env['OTEL_TRACES_EXPORTER']}`: this build exports otlp only")
    traces = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    if not traces and not base:
        return None
    proto = (env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "").strip()
    if proto and proto != "http/protobuf":
        raise OtelConfigError(f"OTLP protocol `{proto}` is not in this build: use http/protobuf (port 4318)")
    return traces or base.rstrip("/") + "/v1/traces"


def export_timeout(env: Mapping[str, str]) -> float:
    """The bound on one export and on the wait after the run: ``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`` /
    ``OTEL_EXPORTER_OTLP_TIMEOUT`` in seconds, as the Python SDK reads them, capped at
    ``MAX_TIMEOUT_S``; ``DEFAULT_FLUSH_TIMEOUT_S`` when unset."""
    raw = env.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or env.get("OTEL_EXPORTER_OTLP_TIMEOUT")
    if not raw:
        return DEFAULT_FLUSH_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        raise OtelConfigError(f"OTEL_EXPORTER_OTLP_TIMEOUT `{raw}` is not a number of seconds") from None
    return min(max(value, 0.05), MAX_TIMEOUT_S)


def sink_from_env(env: Mapping[str, str]) -> OtelSink | None:
    """The sink the environment switches on (``None`` when off); raises :class:`OtelConfigError`."""
    url = otel_endpoint(env)
    if url is None:
        return None
    import logging

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    logging.getLogger("opentelemetry").setLevel(logging.CRITICAL)  # failures are reported once, by the sink
    timeout = export_timeout(env)
    exporter = OTLPSpanExporter(endpoint=url, timeout=timeout)
    return OtelSink(exporter, flush_timeout_s=timeout, service=env.get("OTEL_SERVICE_NAME") or DEFAULT_SERVICE)


class _Counting:
    """Wraps an exporter to count what was and was not delivered (for the one note after the run)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent = 0
        self.failed = 0

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self.inner.export(spans)
        except Exception:
            result = SpanExportResult.FAILURE
        if result == SpanExportResult.SUCCESS:
            self.sent += len(spans)
        else:
            self.failed += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))


class OtelSink:
    """An ``on_event`` sink building one OpenTelemetry trace per run (see the module doc)."""

    def __init__(self, exporter: Any, *, flush_timeout_s: float = DEFAULT_FLUSH_TIMEOUT_S, service: str = "nika"):
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        self.exporter = _Counting(exporter)
        self.flush_timeout_s = flush_timeout_s
        self.provider = TracerProvider(resource=Resource.create({"service.name": service}), shutdown_on_exit=False)
        self.provider.add_span_processor(BatchSpanProcessor(self.exporter, schedule_delay_millis=500))
        self.tracer = self.provider.get_tracer("nika")
        self.root: Any = None
        self.tasks: dict[str, Any] = {}
        self.attempts: dict[tuple[str, Any], tuple[Any, int]] = {}
        self.tools: dict[str, str] = {}  # invoke: tasks → their tool
        import runtime.telemetry.otel_spans  # noqa: F401 - loaded now, before the run, not on its first event

    # -- events ---------------------------------------------------------------------------------

    def __call__(self, event: dict[str, Any]) -> None:
        from runtime.telemetry.otel_spans import handle

        handle(self, event)

    # -- the end --------------------------------------------------------------------------------

    def close(self) -> str | None:
        """Flush within the bound, then shut down off the caller's thread; a note when spans were lost."""
        from runtime.telemetry.otel_spans import end_all

        end_all(self, None)
        done = threading.Event()

        def finish() -> None:
            try:
                self.provider.force_flush(int(self.flush_timeout_s * 1000))
                self.provider.shutdown()
            finally:
                done.set()

        threading.Thread(target=finish, name="nika-otel-shutdown", daemon=True).start()
        finished = done.wait(self.flush_timeout_s + 0.25)
        if self.exporter.failed or not finished:
            lost = "some spans" if not finished else f"{self.exporter.failed} span(s)"
            return (
                f"telemetry: {lost} could not be exported (the OTLP endpoint did not take them); the run is unaffected"
            )
        return None
