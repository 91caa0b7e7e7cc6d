"""The egress judge: where a secret may be sent, decided for every hop of every request that leaves
the run (the fetch client with its crawl, ``nika:notify``'s webhooks, the model and media providers).

Spec 01 §egress: a secret→sink edge is sanctioned iff its sink id equals an ``egress[].to:``
(① confidentiality) and, for a network sink, ``host:`` equals the destination host or
``host_from_self`` names the secret's own URL (② integrity); ③ capability (the host is also in
``permits.net.http``) is the permits' judge. ``nika check`` decides what is literal
(NIKA-SEC-006); this module decides the concrete request, at the moment it leaves, on plain data:

* which held secrets a request **carries**: those whose value is in its URL, a header or its body
  in a spelling the redactor masks (:func:`runtime.guard.redact.carries`: raw, JSON-escaped,
  percent-encoded, base64 at any alignment, so a ``Basic`` header too);
* whether each carried secret is sanctioned for this sink at this host (:func:`refusal`).

A redirect is a new request, judged again. A hop that moves to another host while carrying a
secret is sanctioned only by a ``host:`` rule naming that host exactly: ``{to}`` alone and
``host_from_self`` sanction the request the workflow wrote, never a destination a server picked;
and no secret follows a redirect from ``https`` down to ``http``. A refused hop is never sent (not
even with the secret stripped): NIKA-SEC-004 names the secret, the sink and both hosts. A hop that
carries no secret is followed as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar

from checker.contracts.effects import canonical_host, egress_admits, url_host
from checker.core.records import field, record
from runtime.errors import TaskError

SEC = "NIKA-SEC-004"


@record(slots=False)
class Rule:
    """One ``egress:`` entry of a secret (01 §egress): the sink id, and the host it pins."""

    to: str
    host: str | None = None
    from_self: bool = False


@record(slots=False)
class Held:
    """A secret the run holds: its name (a declared secret, or the engine variable of a provider
    key), its value (never shown) and the egress rules that sanction it."""

    name: str
    value: str = field(repr=False)
    rules: tuple[Rule, ...] = ()


@record(slots=False)
class Hop:
    """One request about to leave: the sink, this hop's destination, the request the chain began
    with (``index`` 0 is that request), and what it carries (each secret with where it sits)."""

    sink: str
    scheme: str
    host: str
    index: int = 0
    first_host: str = ""
    first_scheme: str = ""
    carried: tuple[tuple[Held, tuple[str, ...]], ...] = ()


@record(slots=False)
class Carrier:
    """What one effect's requests are judged with: its sink id (a tool id, ``infer``/``agent``), the
    secrets the run holds, and the judge that also witnesses the decision in the journal
    (:meth:`runtime.guard.permits.Boundary.check_egress`; :func:`enforce` when there is none)."""

    sink: str
    held: tuple[Held, ...] = ()
    judge: Callable[[Hop], None] | None = None

    def decide(self, hop: Hop) -> None:
        (self.judge or enforce)(hop)


# The carrier of the effect being performed: set by the executor around each effect (in the
# driver, and on a Dask worker from the effect's record), read by every network reader.
CURRENT: ContextVar[Carrier | None] = ContextVar("nika_egress_carrier", default=None)


def current(sink: str) -> Carrier:
    """The carrier of the effect being performed, or one holding no secret (a library caller)."""
    return CURRENT.get() or Carrier(sink)


def rules_of(decl: object) -> tuple[Rule, ...]:
    """The egress rules of a declared secret (``checker.model.workflow.Secret``)."""
    out = []
    for e in getattr(decl, "egress", ()) or ():
        if e.to:
            out.append(Rule(str(e.to), str(e.host) if e.host is not None else None, bool(e.host_from_self)))
    return tuple(out)


def carried(
    held: Iterable[Held], url: str, headers: Mapping[str, str], body: bytes | str | None
) -> tuple[tuple[Held, tuple[str, ...]], ...]:
    """The held secrets this request carries, each with where: ``URL``, a header's name, ``body``."""
    from runtime.guard.redact import carries

    out = []
    for h in held:
        where = [] if not carries(h.value, [url]) else ["URL"]
        where += [f"header `{k}`" for k, v in headers.items() if carries(h.value, [str(v)])]
        if body and carries(h.value, [body]):
            where.append("body")
        if where:
            out.append((h, tuple(where)))
    return tuple(out)


def admits(rule: Rule, held: Held, sink: str, host: str) -> bool:
    """Whether ``rule`` of ``held`` sanctions sending it to ``sink`` at the canonical ``host``
    (01 §egress ① and ②, on the concrete destination: the checker's own
    :func:`~checker.contracts.effects.egress_admits`; a rule with no host admits any host here,
    which :func:`refusal` narrows on a redirect)."""
    self_host = url_host(held.value) if rule.from_self else None
    return egress_admits(rule.to, rule.host, rule.from_self, sink, host, self_host)


def refusal(hop: Hop) -> tuple[Held, str] | None:
    """The first carried secret this hop may not carry, and why; ``None`` when every one is
    sanctioned here (or it carries none)."""
    moved = hop.index > 0 and hop.host != hop.first_host
    for held, where in hop.carried:
        at = " and ".join(where)
        mine = [r for r in held.rules if r.to == hop.sink]
        if not mine:
            return held, (
                f"secret `{held.name}` would reach `{hop.sink}` at `{hop.host}` (in the {at}), and its `egress:` "
                f"sanctions no `{hop.sink}`"
            )
        fitting = [r for r in mine if admits(r, held, hop.sink, hop.host)]
        if moved and not any(r.host is not None for r in fitting):
            pinned = sorted({canonical_host(r.host) for r in mine if r.host is not None})
            return held, (
                f"the redirect from `{hop.first_host}` to `{hop.host}` would carry secret `{held.name}` (in the {at}); "
                + (
                    f"its `egress:` pins `{hop.sink}` to {', '.join(f'`{h}`' for h in pinned)}"
                    if pinned
                    else f"its `egress:` sanctions `{hop.sink}` for the request the workflow wrote, not for a host "
                    "a server redirects to"
                )
                + f' (the engine does not follow it; add `{{ to: "{hop.sink}", host: "{hop.host}" }}` if intended)'
            )
        if not fitting:
            hosts = sorted(
                {canonical_host(r.host) for r in mine if r.host is not None}
                | {h for r in mine if r.from_self and (h := url_host(held.value))}
            )
            return held, (
                f"secret `{held.name}` would reach `{hop.sink}` at `{hop.host}` (in the {at}); its `egress:` "
                f"sanctions `{hop.sink}` only at {', '.join(f'`{h}`' for h in hosts)}"
            )
        if hop.index > 0 and hop.first_scheme == "https" and hop.scheme == "http":
            return held, (
                f"the redirect from `https://{hop.first_host}` to `http://{hop.host}` would send secret "
                f"`{held.name}` in clear (in the {at}); the engine does not follow it"
            )
    return None


def enforce(hop: Hop) -> None:
    """Raise NIKA-SEC-004 when :func:`refusal` refuses ``hop``."""
    found = refusal(hop)
    if found is not None:
        raise denial(hop, *found)


def denial(hop: Hop, held: Held, why: str) -> TaskError:
    return TaskError(
        SEC,
        why,
        details={
            "plane": "egress",
            "gate": hop.sink,
            "secret": held.name,
            "host": hop.host,
            "from_host": hop.first_host or hop.host,
        },
    )


def judge_request(url: str, headers: Mapping[str, str], body: bytes | str | None, sink: str) -> None:
    """One request that follows no redirect (a model or media provider call), decided by the
    carrier of the effect being performed (``sink`` when there is none)."""
    carrier = current(sink)
    if not carrier.held:
        return
    from runtime.net import url as urls

    u = urls.parse(url)
    host = canonical_host(u.host)
    carrier.decide(Hop(carrier.sink, u.scheme, host, 0, host, u.scheme, carried(carrier.held, url, headers, body)))
