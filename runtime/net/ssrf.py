"""The SSRF floor (stdlib builtins §nika:fetch, Security: engine MUST).

A host is resolved once; every address it resolves to is judged; the request then connects to the
judged address (no second lookup, so DNS rebinding cannot swap it). Private, loopback,
link-local, CGNAT, multicast, reserved and cloud-metadata addresses are refused unless the engine
configuration allows them: ``NIKA_FETCH_ALLOW_PRIVATE`` is a comma-separated list of host names
and CIDR ranges. The cloud-metadata addresses stay refused unless listed by address (a range that
merely contains them does not lift them).

The project configuration (``fetch-allow-private``, a list of the same items, in ``nika.toml`` or
``[tool.nika]``, found upward from the workflow file like every project setting) adds to it: the
allowance is the union of both, so neither can narrow what the other lifts (the variable is the
operator's per-shell or per-CI say, the project file the repository's standing one). The project
list is joined into the run's engine environment once, when the run is set up
(:func:`runtime.net.allowance.with_project_allowance`), so every executor and every reader of the variable sees the same
allowance. A project file the workflow could rewrite (inside one of its ``permits.fs.write``
grants, or a caller's) lifts nothing: like the MCP table, engine configuration the workflow can
write is not engine configuration; a refusal it would have lifted says so.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Mapping

from checker.contracts import effects
from checker.core.records import record
from runtime.errors import TaskError
from runtime.net.allowance import ALLOW_ENV, PROJECT_KEY, WITHHELD_ENV, with_project_allowance  # noqa: F401

SEC = "NIKA-SEC-004"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]

# the cloud-metadata addresses, from the one floor table (checker/contracts/effects.toml [floor])
METADATA: frozenset[IPAddress] = frozenset(ipaddress.ip_address(a) for a in effects.metadata_addresses())


@record(slots=False)
class Allowance:
    """What the engine configuration lifts: host names and networks."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    withheld: str | None = None  # why the project's list does not count, when it does not

    @classmethod
    def parse(cls, text: str | None, withheld: str | None = None) -> Allowance:
        hosts: set[str] = set()
        nets = []
        for raw in (text or "").split(","):
            item = raw.strip().lower()
            if not item:
                continue
            try:
                nets.append(ipaddress.ip_network(item.strip("[]"), strict=False))
            except ValueError:
                hosts.add(item)
        return cls(frozenset(hosts), tuple(nets), withheld or None)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Allowance:
        env = environ if environ is not None else os.environ
        return cls.parse(env.get(ALLOW_ENV), env.get(WITHHELD_ENV))

    def lifts(self, host: str, addr: IPAddress) -> bool:
        if addr in METADATA:  # only an explicit listing by address lifts a metadata address
            return any(n.num_addresses == 1 and n.network_address == addr for n in self.networks)
        return host.lower() in self.hosts or any(addr in n for n in self.networks)


def literal_address(host: str) -> IPAddress | None:
    """``host`` as an IP address when it is one in any spelling, including the legacy IPv4 forms
    (decimal ``2130706433``, octal ``0177.0.0.1``, hex ``0x7f.1``) that resolvers accept: the
    checker's :func:`checker.contracts.effects.address_of`, so check and run read a literal alike."""
    return effects.address_of(host)  # type: ignore[no-any-return]


def why_refused(addr: IPAddress) -> str | None:
    """Why ``addr`` is on the floor's refused list, or ``None`` when it is public: the one judge of
    the floor (:func:`checker.contracts.effects.address_floor`), which unwraps every IPv6 form
    that carries an IPv4 address (mapped, compatible, 6to4, Teredo, NAT64)."""
    return effects.address_floor(addr)  # type: ignore[no-any-return]


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(i[4][0]) for i in infos]


def judge_host(host: str, port: int, allowance: Allowance, resolve: Resolver = system_resolver) -> IPAddress:
    """Resolve ``host`` once and return the address to connect to; raise NIKA-SEC-004 when an
    address it resolves to is on the floor and not lifted. Every address is judged, so a name
    with one public and one private record is refused."""
    literal = literal_address(host)
    if literal is not None:
        found: list[IPAddress] = [literal]
    else:
        try:
            found = [ipaddress.ip_address(a.split("%", 1)[0]) for a in resolve(host, port)]
        except (OSError, UnicodeError, ValueError) as e:
            raise TaskError(
                "NIKA-BUILTIN-FETCH-001",
                f"`{host}` could not be resolved: {e}",
                transient=True,
                details={"host": host},
            ) from None
        if not found:
            raise TaskError("NIKA-BUILTIN-FETCH-001", f"`{host}` resolved to no address", details={"host": host})
    for addr in found:
        why = why_refused(addr)
        if why is not None and not allowance.lifts(host, addr):
            lift = (
                f"list `{addr}` itself in {ALLOW_ENV} to allow it"
                if addr in METADATA
                else f"allow it in {ALLOW_ENV} (hosts and CIDR ranges)"
            )
            if allowance.withheld:
                lift += f" ({allowance.withheld})"
            raise TaskError(
                SEC,
                f"`{host}` resolves to {addr}, {why}; the engine refuses it (SSRF floor): {lift}",
                details={"plane": "net", "gate": "ssrf", "host": host, "address": str(addr)},
            )
    return found[0]
