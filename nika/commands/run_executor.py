"""Where ``nika run``'s effects run: in this process (the local executor), or on the workers of a
Dask cluster (``--executor dask``, ``$NIKA_EXECUTOR``; ``--scheduler`` or ``$DASK_SCHEDULER_ADDRESS``
joins one, else a local cluster is started)."""

from __future__ import annotations

from typing import Any, TextIO

from nika.commands.run_console import write


def dask_session(executor: str | None, scheduler: str | None, err: TextIO, *, deterministic: bool = False) -> Any:
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
    if deterministic:
        raise ValueError(
            "--executor dask: a deterministic run (`run: { entropy: …, clock: virtual }`, NEP-0010) performs its "
            "effects in this process, in order, on its virtual clock; run it with the local executor"
        )
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
    write(err, line + "\n")
    return session
