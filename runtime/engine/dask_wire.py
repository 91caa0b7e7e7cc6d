"""What crosses the wire of the Dask executor, as plain data: the engine variables one effect
may carry (its provider's, its network builtin's, no others), the worker's record turned back
into an :class:`~runtime.engine.executor.EffectResult`, and a Dask failure as the task's error."""

from __future__ import annotations

import ipaddress
import pickle
from collections.abc import Iterable
from typing import Any

from runtime.engine.dask_worker import LOST_CODE
from runtime.engine.executor import EffectResult
from runtime.errors import INTERNAL


def provider_env(model: str, engine_env: Any) -> dict[str, str]:
    """The engine variables the provider of ``model`` reads, and no others."""
    from checker.contracts import tables as contracts

    pid = model.partition("/")[0]
    info = contracts.providers().get(pid)
    from runtime.guard.limits import PROVIDER_DEADLINE_VAR

    names = [f"NIKA_{pid.upper()}_BASE_URL", f"NIKA_{pid.upper()}_API_KEY", *(info.env_vars if info else ())]
    names.append(PROVIDER_DEADLINE_VAR)
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


def tool_env(prefixes: tuple[str, ...], engine_env: Any) -> dict[str, str]:
    """The engine variables a builtin reads (its ``engine_env`` column in builtins.toml: the SSRF
    allowance, notify's targets and relay), and no others."""
    if not prefixes:
        return {}
    return {n: v for n, v in engine_env.items() if n.startswith(prefixes)}


def effect_result(outcome: tuple[str, Any], client: Any = None) -> EffectResult:
    """The worker's record as the effect's result; a Dask failure as the task's typed error
    (``client``: the session's, to tell a lost scheduler from a lost worker)."""
    status, value = outcome
    if status != "finished":
        return EffectResult(error=lost_error(status, value, scheduler_lost=disconnected(client)))
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


# What a lost worker or a lost scheduler leaves a future with: transient (``retry:`` may run the
# effect again, ``--resume`` runs it again), never an engine error.
LOST = frozenset(
    {
        "KilledWorker",
        "CommClosedError",
        "StreamClosedError",
        "FutureCancelledError",
        "FuturesCancelledError",
        "CancelledError",
        "TimeoutError",
        "ConnectionRefusedError",
        "ConnectionResetError",
        "BrokenPipeError",
        "OSError",
        # no worker left that can run it (every worker died and none came back, a pinned one gone)
        "NoValidWorkerError",
    }
)


def disconnected(client: Any) -> bool:
    """Whether a ``distributed.Client`` lost its scheduler (it may be trying to reconnect)."""
    status = getattr(client, "status", None)
    return isinstance(status, str) and status not in ("running", "newly-created")


def lost_error(status: str, exc: Any, *, scheduler_lost: bool = False) -> dict[str, Any]:
    """A Dask failure as the task's error: a lost worker or scheduler is transient, typed
    ``NIKA-IMPL-003`` (``retry:`` may run it again, ``--resume`` re-runs it); only an error the
    effect's own code raised through Dask is the engine's."""
    name = type(exc).__name__ if exc is not None else None
    text = str(exc).splitlines()[0] if exc is not None and str(exc) else (name or status)
    lost = exc is None or name in LOST or isinstance(exc, OSError | TimeoutError) or status in ("lost", "cancelled")
    if lost or scheduler_lost:
        if scheduler_lost or exc is None:
            what, kind = "the Dask scheduler was lost (the client lost its connection)", "scheduler-lost"
        else:
            what, kind = f"the Dask worker performing the effect was lost ({name})", name
        return {
            "code": LOST_CODE,
            "message": f"{what}; `retry:` decides whether it runs again, and `--resume` re-runs it",
            "transient": True,
            "details": {"dask": kind, "status": status},
        }
    return {
        "code": INTERNAL,
        "message": f"the Dask executor failed: {name}: {text}",
        "transient": False,
        "details": {"dask": name},
    }


# Engine variables whose values are credentials (a provider's key, the SMTP password): what crosses
# the wire with an effect that counts as a secret for :func:`clear_text`.
SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_PASSWORD", "_SECRET")
TLS_HOWTO = (
    "configure TLS for the cluster (the dask configuration `distributed.comm.require-encryption: true` "
    "with `distributed.comm.tls.ca-file`, `distributed.comm.tls.client.cert` and `distributed.comm.tls.client.key`, "
    "and the scheduler's and workers' own certificates) and join it at tls://HOST:PORT, or keep the scheduler and "
    "its workers on this machine"
)


def clear_text(scheduler: str, workers: Iterable[str]) -> str | None:
    """Why what an effect carries would cross the network unencrypted on this cluster, or ``None``:
    a ``tls://`` scheduler encrypts every connection of the cluster; otherwise the scheduler and
    every worker must be on loopback (``inproc://`` is in process)."""
    if scheduler.startswith("tls://"):
        return None
    for address in (scheduler, *workers):
        scheme, sep, rest = address.partition("://")
        if not sep:
            scheme, rest = "tcp", address
        if scheme == "inproc":
            continue
        host = rest.rsplit(":", 1)[0].strip("[]") if ":" in rest else rest
        if not _loopback(host):
            what = "the Dask scheduler" if address == scheduler else "the Dask worker"
            return f"{what} at {address} is not on loopback and the connection is not TLS"
    return None


def _loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def shipped_secrets(payload: dict[str, Any], held: Iterable[Any]) -> tuple[list[Any], list[str]]:
    """The held secrets (``runtime.net.egress.Held``) whose value is in ``payload`` as it will be
    pickled for the wire, and the credential engine variables it carries by name."""
    try:
        blob = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):  # what only Dask's own serializer takes
        import cloudpickle

        blob = cloudpickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    found = [h for h in held if h.value.encode("utf-8", "surrogatepass") in blob]
    keys = sorted(n for n, v in (payload.get("env") or {}).items() if v and n.upper().endswith(SECRET_SUFFIXES))
    return found, keys
