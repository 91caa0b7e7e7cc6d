"""The run engine, one room per job:

* :mod:`~runtime.engine.inputs` — a run's start: the file compiled, ``--var`` bound to ``inputs:``,
  what this build cannot honour;
* :mod:`~runtime.engine.options` — how to run (:class:`~runtime.engine.options.Options`);
* :mod:`~runtime.engine.records` — the run's records: ``tasks.X``, outcomes, the result;
* :mod:`~runtime.engine.run` — the ready set over the precedence graph: gates, settling, cancel;
* :mod:`~runtime.engine.dispatch` — one task's pipeline (``with:`` → ``when:`` → verb →
  ``on_error:`` → ``output:``);
* :mod:`~runtime.engine.stage` — the verb stage (``retry:`` under ``timeout:``, ``on_error:``, ``output:``);
* :mod:`~runtime.engine.retry` — attempts and backoff;
* :mod:`~runtime.engine.for_each` — one scope per item;
* :mod:`~runtime.engine.on_finally` — cleanup steps;
* :mod:`~runtime.engine.resume_match` — where a run meets ``--resume``: task hashes, cache hits, checkpoints;
* :mod:`~runtime.engine.frames` — the prologue and a task's terminal frame;
* :mod:`~runtime.engine.scope` — the base scope, ``secrets.*``, the workflow's outputs;
* :mod:`~runtime.engine.events` — the event sink (trace, report, progress);
* :mod:`~runtime.engine.services` — what a run shares across calls: providers, HTTP client, MCP servers;
* :mod:`~runtime.engine.context` — :class:`VerbContext`, all a verb may read and do, and the
  :class:`VerbTable` a run dispatches verbs through (handed in by :mod:`runtime.verbs`);
* :mod:`~runtime.engine.verb_call` — one verb call: its context built, its runner looked up;
* :mod:`~runtime.engine.executor` — the executor seam: where an effect runs (``dask_*``: on Dask workers).

The helpers read the run through narrow Protocols of what each needs (``AttemptingRun``,
``StagedRun``, ``FanningRun``, ``FinallyRun``, ``FramedRun``, ``ResumingRun``, ``CallingRun``), so
no module below :mod:`~runtime.engine.run` imports it, not even for type checking.
"""
