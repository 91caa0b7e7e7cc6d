"""Where a run's events go besides the journal: the event sinks (NDJSON stream, fan-out) and
the OpenTelemetry export (the sink and its event-to-span mapping)."""
