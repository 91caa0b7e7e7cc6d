"""The run engine, one room per job:

* :mod:`~runtime.engine.records` — the run's records: options, ``tasks.X``, outcomes, the result;
* :mod:`~runtime.engine.run` — the ready set over the precedence graph: gates, settling, cancel;
* :mod:`~runtime.engine.dispatch` — one task's pipeline (``with:`` → ``when:`` → verb →
  ``on_error:`` → ``output:``) and the verb dispatch;
* :mod:`~runtime.engine.retry` — attempts and backoff;
* :mod:`~runtime.engine.for_each` — one scope per item;
* :mod:`~runtime.engine.on_finally` — cleanup steps;
* :mod:`~runtime.engine.scope` — the base scope, ``secrets.*``, the workflow's outputs;
* :mod:`~runtime.engine.events` — the event sink (trace, report, progress);
* :mod:`~runtime.engine.context` — :class:`VerbContext`, all a verb may read and do;
* :mod:`~runtime.engine.executor` — the executor seam: where an effect runs.
"""
