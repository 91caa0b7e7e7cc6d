"""What crosses the wire of the Dask executor, as plain data: the engine variables one effect
may carry (its provider's, its network builtin's, no others), the worker's record turned back
into an :class:`~runtime.engine.executor.EffectResult`, and a Dask failure as the task's error."""

from __future__ import annotations

from typing import Any

from runtime.engine.dask_worker import LOST_CODE
from runtime.engine.executor import EffectResult
from runtime.errors import INTERNAL


def provider_env(model: str, engine_env: Any) -> dict[str, str]:
    """The engine variables the provider of ``model`` reads, and no others."""
    from checker.contracts import tables as contracts

    pid = model.partition("/")[0]
    info = contracts.providers().get(pid)
    names = [f"NIKA_{pid.upper()}_BASE_URL", f"NIKA_{pid.upper()}_API_KEY", *(info.env_vars if info else ())]
    if pid == "mock":  # the configured and scripted mocks read their fixtures from engine variables
        from runtime.providers.mock_configured import ENGINE_VARS

        names.extend(ENGINE_VARS)
    return {n: engine_env[n] for n in names if n in engine_env}


def version_mismatch(ours: dict[str, str], theirs: dict[str, dict[str, str]]) -> str | None:
    """Why the workers (``{address: versions}``) cannot serve this driver, or ``None``."""
    for worker, v in sorted(theirs.items()):
        if v != ours:
            diff = ", ".join(f"{k} {v.get(k)} (the driver has {ours[k]})" for k in ours if v.get(k) != ours[k])
            return f"the Dask worker {worker} runs {diff}; every worker must run the driver's versions"
    return None


# The engine configuration a network builtin reads (the SSRF allowance; notify's targets and relay).
TOOL_ENV_PREFIXES = {"nika:notify": ("NIKA_FETCH_", "NIKA_NOTIFY_", "NIKA_SMTP_")}


def tool_env(tool: str, engine_env: Any) -> dict[str, str]:
    """The engine variables the network builtin ``tool`` reads, and no others."""
    prefixes = TOOL_ENV_PREFIXES.get(tool, ("NIKA_FETCH_",))
    return {n: v for n, v in engine_env.items() if n.startswith(prefixes)}


def effect_result(outcome: tuple[str, Any]) -> EffectResult:
    status, value = outcome
    if status != "finished":
        return EffectResult(error=lost_error(status, value))
    r = value
    ti, to, fr, th = (*(r.get("tokens") or ()), None, None, None, None)[:4]
    return EffectResult(
        r.get("output"),
        r.get("error"),
        tuple(r.get("witness") or ()),
        r.get("started_at", ""),
        float(r.get("duration_ms") or 0.0),
        ti,
        to,
        fr,
        th,
        tuple(r.get("events") or ()),
        r.get("worker"),
    )


def lost_error(status: str, exc: Any) -> dict[str, Any]:
    """A Dask failure as the task's error: a lost worker is transient (``retry:`` may run it again)."""
    name = type(exc).__name__
    text = str(exc).splitlines()[0] if exc is not None and str(exc) else name
    lost = ("KilledWorker", "CommClosedError", "FutureCancelledError", "CancelledError", "NoValidWorkerError")
    if name in lost or status == "lost":
        return {
            "code": LOST_CODE,
            "message": f"the Dask worker performing the effect was lost ({name}); "
            "`retry:` decides whether it runs again",
            "transient": True,
            "details": {"dask": name},
        }
    return {
        "code": INTERNAL,
        "message": f"the Dask executor failed: {name}: {text}",
        "transient": False,
        "details": {"dask": name},
    }
