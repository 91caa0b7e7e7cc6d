"""The effect table and the boundary it is judged against (spec 10, 01 §permits, NEP-0003..0009).

One table (``contracts/effects.toml``) says which verb, builtin and argument needs which grant;
this module reads it and answers, for concrete values, the questions both the checker (on
literals and check-time-resolvable values) and the runtime (on resolved values) ask:

* :func:`tool_effects` / :func:`requirements` — what a call needs (``requirements`` takes the
  concrete ``args`` mapping a runtime is about to dispatch);
* :class:`Boundary` — a ``permits:`` block as data; :meth:`Boundary.check` returns ``None`` when
  a need fits, else a :class:`Denial` that names the canonical form and the bound it escaped;
* the canonical forms per plane (:func:`canonical_path`, :func:`canonical_host`, :func:`url_host`)
  and the floors no grant lifts (:func:`floor_reason` / :func:`address_floor`, :func:`dangerous_env`,
  :func:`code_bearing`);
* the env plane's judge of a value (:func:`judge_env_value`: an untrusted value never sets a
  name that says where code or configuration is loaded from). The argv judge is
  :mod:`checker.contracts.argv`.

Nothing here reads a file other than the table, touches the network or resolves a name.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from typing import Any

from checker.core.globs import ToolRule, canonical_path, match_path, parse_tool_rules, tool_verdict
from checker.core.records import field, record
from checker.model.workflow import Permits
from checker.parse.values import ScalarValue, TemplateValue

__all__ = [
    "PLANES",
    "Boundary",
    "Denial",
    "Need",
    "Target",
    "ToolEffects",
    "address_floor",
    "address_of",
    "canonical_host",
    "canonical_path",
    "code_bearing",
    "config_files",
    "dangerous_env",
    "egress_admits",
    "embedded_ipv4",
    "env_classes",
    "env_floor_class",
    "env_locator_class",
    "floor_reason",
    "is_exact_loopback",
    "judge_env_value",
    "metadata_addresses",
    "requirements",
    "runs_any_code",
    "tool_effects",
    "url_host",
    "url_path",
]

#: the grant planes, in the order a ``permits:`` block is written
PLANES = ("fs.read", "fs.write", "net", "exec", "tools", "env")


@cache
def _table() -> dict[str, Any]:
    from checker.core.toml_sections import whole

    return whole(os.path.join(os.path.dirname(__file__), "effects.toml"))


@record
class Target:
    """One argument naming where an effect lands."""

    arg: str
    plane: str
    kind: str
    when: tuple[tuple[str, tuple[Any, ...]], ...] = ()

    @property
    def steps(self) -> tuple[str, ...]:
        return tuple(self.arg.split("."))


@record
class ToolEffects:
    """What one tool id needs and what its result is."""

    tool: str
    needs: tuple[str, ...]
    targets: tuple[Target, ...] = ()
    pure: bool = False
    ingress: bool = False
    egress: bool = False
    known: bool = True
    serial: bool = False  # one call at a time, whatever its effects (a question to a human)

    @property
    def needs_tools_grant(self) -> bool:
        return not self.pure

    @property
    def read_only(self) -> bool:
        """Nothing is written and nothing leaves the run: the call may run beside other such
        calls (an agent's batch runs its read-only calls concurrently). An ``mcp:`` tool never is."""
        return self.known and not self.egress and not self.serial and set(self.needs) <= {"fs.read", "tools"}


def _capability(tool_id: str) -> str | None:
    """``pure_internal`` / ``external`` from the builtin's contract (loaded for this id only)."""
    from checker.contracts import tables as contracts

    c = contracts.contract(tool_id)
    return c.capability if c is not None else None


@cache
def tool_effects(tool_id: str) -> ToolEffects:
    """The effects of ``tool_id``. An ``mcp:`` tool is opaque (ingress and egress hold); an
    unknown ``nika:`` id is treated like an external tool with no known target."""
    rows = _table()["builtins"]
    if tool_id.startswith("mcp:"):
        return ToolEffects(tool_id, ("tools",), ingress=True, egress=True)
    capability = _capability(tool_id)
    row = rows.get(tool_id)
    if row is None:
        pure = capability == "pure_internal"
        return ToolEffects(tool_id, () if pure else ("tools",), pure=pure, known=capability is not None)
    targets = tuple(
        Target(t["arg"], t["plane"], t.get("kind", "path"), tuple((k, tuple(v)) for k, v in t.get("when", {}).items()))
        for t in row.get("targets", ())
    )
    pure = capability == "pure_internal"
    needs = tuple(row.get("needs", ())) + (() if pure else ("tools",))
    return ToolEffects(
        tool_id,
        needs,
        targets,
        pure,
        bool(row.get("ingress", False)),
        bool(row.get("egress", False)),
        True,
        bool(row.get("serial", False)),
    )


def verb_needs(verb: str) -> tuple[str, ...]:
    return tuple(_table()["verbs"].get(verb, {}).get("needs", ()))


# -- concrete requirements (the runtime's entry point) ------------------------------------------


@record
class Need:
    """One grant a call needs: its plane and, when an argument names the target, the value."""

    plane: str
    value: str | None = None
    arg: str | None = None


def _at(args: Any, steps: Sequence[str]) -> Iterator[Any]:
    if not steps:
        yield args
        return
    step, rest = steps[0], steps[1:]
    many = step.endswith("[]")
    key = step[:-2] if many else step
    if not isinstance(args, Mapping) or key not in args:
        return
    v = args[key]
    if many:
        if isinstance(v, list | tuple):
            for item in v:
                yield from _at(item, rest)
    else:
        yield from _at(v, rest)


def target_applies(target: Target, lookup: Mapping[str, Any]) -> bool:
    """Whether a conditional target applies given the concrete (or unknown) condition values."""
    for k, allowed in target.when:
        v = lookup.get(k, None)
        if isinstance(v, str | int | float | bool) and v not in allowed:
            return False
    return True


def requirements(tool_id: str, args: Mapping[str, Any] | None) -> list[Need]:
    """Every grant an ``invoke`` of ``tool_id`` with these concrete ``args`` needs."""
    eff = tool_effects(tool_id)
    out = [Need(p) for p in eff.needs]
    args = args or {}
    for t in eff.targets:
        if not target_applies(t, args):
            continue
        for v in _at(args, t.steps):
            if isinstance(v, str):
                out.append(Need(t.plane, v, t.arg))
    return out


# -- canonical forms ----------------------------------------------------------------------------


def url_host(url: str) -> str | None:
    """The host of an absolute ``scheme://`` URL (lower-cased, unbracketed), else ``None``: also
    ``None`` when the authority's port is not a port (``host:abc``, ``host:99999``), so no reader
    ever meets a URL this one accepted and a stricter parser refuses. The one reading of a URL's
    authority, for the check and for the run's permits."""
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme or not scheme.replace("+", "").replace("-", "").replace(".", "").isalnum():
        return None
    authority = rest
    for stop in "/?#":
        authority = authority.split(stop, 1)[0]
    authority = authority.rsplit("@", 1)[-1]
    if authority.startswith("["):
        host, _, after = authority[1:].partition("]")
        port = after[1:] if after.startswith(":") else None
        if after and port is None:
            return None  # text after the bracket that is not a port
    else:
        host, colon, port_text = authority.partition(":")
        port = port_text if colon else None
    if port and not (port.isascii() and port.isdigit() and int(port) <= 65535):
        return None
    return canonical_host(host) if host else None


def egress_admits(
    to: str | None, host: str | None, from_self: bool, sink: str, dest: str | None, self_host: str | None = None
) -> bool:
    """Whether one ``egress:`` rule (``to``, ``host`` / ``host_from_self``) sanctions sending its
    secret to ``sink`` at the canonical host ``dest`` (01 §egress ① confidentiality: the sink id
    equals ``to:``; ② integrity: ``host:`` equals the destination host, or ``host_from_self`` and
    the destination is the secret's own URL, whose host is ``self_host``; a rule with neither, or a
    sink with no addressable host (``dest`` ``None``), leaves it to ①). The checker asks it of a
    literal destination, the runtime's egress judge of every request about to leave."""
    if to != sink:
        return False
    if dest is None:
        return True
    if host is not None:
        return canonical_host(host) == dest
    if from_self:
        return self_host is not None and self_host == dest
    return True


def url_path(url: str) -> str:
    """The path of a URL (query and fragment dropped), percent-decoded once."""
    _, sep, rest = url.partition("://")
    if sep:
        slash = rest.find("/")
        rest = rest[slash:] if slash >= 0 else ""
    for stop in "?#":
        rest = rest.split(stop, 1)[0]
    return _percent_decode(rest)


def _percent_decode(s: str) -> str:
    """``%XX`` sequences decoded once (UTF-8, invalid bytes replaced); no ``+`` handling."""
    if "%" not in s:
        return s
    out = bytearray()
    i = 0
    raw = s.encode("utf-8")
    while i < len(raw):
        if raw[i] == 0x25 and _is_hex(raw[i + 1 : i + 3]):
            out.append(int(raw[i + 1 : i + 3], 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    return out.decode("utf-8", errors="replace")


def _is_hex(b: bytes) -> bool:
    return len(b) == 2 and all(c in b"0123456789abcdefABCDEF" for c in b)


def canonical_host(host: str) -> str:
    """Lower-case, no trailing dot, no port, no brackets, IDNA labels as punycode."""
    h = host.strip()
    if h.startswith("[") and "]" in h:
        h = h[1 : h.index("]")]
    elif h.count(":") == 1:
        h = h.split(":", 1)[0]
    h = h.rstrip(".").lower()
    if h and not h.isascii():
        with contextlib.suppress(UnicodeError):
            h = h.encode("idna").decode("ascii")
    return h


def is_exact_loopback(entry: str) -> bool:
    """``localhost``, a dotted-quad ``127.x.y.z`` or ``::1`` / ``[::1]``, exactly."""
    h = entry.strip().lower()
    if h == "localhost" or h in ("::1", "[::1]"):
        return True
    parts = h.split(".")
    return len(parts) == 4 and parts[0] == "127" and all(p.isdigit() and int(p) < 256 for p in parts)


def floor_reason(host: str) -> str | None:
    """Why the SSRF floor refuses ``host`` (a host as written or canonical), ``None`` for a
    public one: the loopback and metadata names, then :func:`address_floor` on an address
    literal in any spelling."""
    floor = _table()["floor"]
    h = canonical_host(host)
    if h in floor["loopback_names"] or h.endswith(".localhost"):
        return "a loopback name"
    if h in floor["metadata_hosts"]:
        return "a cloud metadata endpoint"
    ip = address_of(h)
    return address_floor(ip) if ip is not None else None


def address_of(host: str) -> Any:
    """``host`` as an IP address when it is one in any spelling a resolver accepts: brackets and
    an IPv6 zone (``fe80::1%eth0``) dropped, the legacy IPv4 forms (``127.1``, ``0x7f000001``,
    ``2130706433``, octal ``0177.0.0.1``) read as ``inet_aton`` reads them; ``None`` for a name."""
    import ipaddress

    h = host.strip().lower()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    h = h.split("%", 1)[0]
    if not h or any(c not in "0123456789abcdefx.:" for c in h):
        return None  # a name, not an address literal
    try:
        return ipaddress.ip_address(h)
    except ValueError:
        pass
    if ":" not in h and any(c.isdigit() for c in h):
        import socket

        try:
            return ipaddress.IPv4Address(socket.inet_aton(h))
        except (OSError, ValueError):
            return None
    return None


def embedded_ipv4(addr: Any) -> Any:
    """The IPv4 address an IPv6 address carries, for every form that routes to it: IPv4-mapped
    (``::ffff:a.b.c.d``), IPv4-compatible (``::a.b.c.d``), 6to4 (``2002:AABB:CCDD::``), Teredo
    (the client, ``2001:0::/32``) and NAT64 (``64:ff9b::/96``, ``64:ff9b:1::/48``); else ``None``."""
    import ipaddress

    if addr.version != 6:
        return None
    if addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    if addr.sixtofour is not None:
        return addr.sixtofour
    if addr.teredo is not None:
        return addr.teredo[1]
    n = int(addr)
    if n >> 32 == 0 and n > 1:  # ::a.b.c.d (not :: and ::1)
        return ipaddress.IPv4Address(n & 0xFFFFFFFF)
    if addr in _net("64:ff9b::/96") or addr in _net("64:ff9b:1::/48"):
        return ipaddress.IPv4Address(n & 0xFFFFFFFF)
    return None


def metadata_addresses() -> tuple[str, ...]:
    """The cloud-metadata addresses of the floor table (only an allowance naming one exactly lifts it)."""
    return tuple(_table()["floor"]["metadata_addresses"])


def address_floor(addr: Any) -> str | None:
    """Why the SSRF floor refuses the address ``addr`` (an ``ipaddress`` address), ``None`` for
    a public one. The one judge of the floor: the checker asks it about literal hosts, the
    runtime about every address a name resolves to. An IPv6 address carrying an IPv4 address
    (:func:`embedded_ipv4`) is judged by the address it reaches."""
    inner = embedded_ipv4(addr)
    if inner is not None:
        why = address_floor(inner)
        if why is not None or addr.teredo is None:
            return why
    if str(addr) in _table()["floor"]["metadata_addresses"]:
        return "a cloud metadata endpoint"
    if addr.is_loopback:
        return "a loopback address"
    if addr.is_link_local:
        return "a link-local address"
    if addr.is_multicast:
        return "a multicast address"
    if addr.version == 4 and addr in _net("100.64.0.0/10"):
        return "a shared (carrier-grade NAT) address"
    if addr.is_unspecified:
        return "the unspecified address"
    if addr.is_reserved:
        return "a reserved address"
    if addr.is_private:
        return "a private address"
    if not addr.is_global or any(addr in _net(n) for n in _table()["floor"]["non_public"] if addr.version == 6):
        return "a non-public address"
    return None


@cache
def _net(cidr: str) -> Any:
    import ipaddress

    return ipaddress.ip_network(cidr)


def _env_class(group: str, name: str) -> str | None:
    upper = name.upper()
    for cls, row in _table()["env"][group].items():
        if upper in row["names"] or any(upper.startswith(p) for p in row["prefixes"]):
            return str(cls)
    return None


def env_classes(group: str) -> dict[str, str]:
    """The classes of ``floor`` (the dangerous-name floor) or ``locator`` (names an untrusted
    value never sets), each with the sentence that says why."""
    return {str(k): str(v["why"]) for k, v in _table()["env"][group].items()}


def env_floor_class(name: str) -> str | None:
    """The class of the dangerous-name floor ``name`` belongs to (NEP-0005 law 3), else ``None``."""
    return _env_class("floor", name)


def env_locator_class(name: str) -> str | None:
    """The locator class of ``name`` (which program runs, where configuration is read, where
    traffic goes), else ``None``."""
    return _env_class("locator", name)


def dangerous_env(name: str) -> bool:
    """Whether ``name`` is on the dangerous-name floor (compared in upper case: a platform whose
    names fold case would honour the lower-case spelling too)."""
    return env_floor_class(name) is not None


def runs_any_code(program: str) -> str | None:
    """What a grant of ``program`` lets through when the program runs code it is handed
    (``"any shell line"`` for a shell, ``"any program text"`` for an interpreter), else None."""
    name = program.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
    table = _table()["exec"]
    if name in table.get("shells", ()):
        return "any shell line"
    if name in table.get("interpreters", ()) or name.rstrip("0123456789.") in table.get("interpreters", ()):
        return "any program text"
    return None


def judge_env_value(name: str, *, untrusted: bool) -> str | None:
    """The env plane's judge of a value a task sets: why an ``untrusted`` value may not set
    ``name`` (a floor name or a locator), ``None`` when it may. An authored value is the
    author's (NEP-0005 law 6): only the floor strips it, at composition."""
    if not untrusted:
        return None
    cls = env_floor_class(name)
    group = "floor"
    if cls is None:
        cls, group = env_locator_class(name), "locator"
    if cls is None:
        return None
    why = _table()["env"][group][cls]["why"]
    return f"`{name}` {why} ({cls}), and an untrusted value never sets it"


def config_files(program: str) -> tuple[str, ...]:
    """Configuration files ``program`` (a name or a path) reads that can name a command it runs."""
    name = program.rsplit("/", 1)[-1]
    return tuple(_table()["config_files"].get(name, ()))


def code_bearing(url: str) -> tuple[str, str] | None:
    """``(class, extension)`` when the URL's path names a code-bearing artifact (NEP-0006).

    The path is judged as a server reads it: percent-decoded until it is stable (a double-encoded
    ``%252e`` is a dot too) and without the trailing dots servers drop (``x.py.`` serves ``x.py``).
    """
    path = url_path(url)
    for _ in range(4):  # each round peels one encoding layer; four is beyond any real server
        decoded = _percent_decode(path)
        if decoded == path:
            break
        path = decoded
    name = path.rsplit("/", 1)[-1].rstrip(". ").lower()
    classes: dict[str, list[str]] = {k: v for k, v in _table()["code_bearing"].items() if k != "versioned"}
    versioned = set(_table()["code_bearing"].get("versioned", ()))
    candidates = [name]
    stripped = name
    while True:  # libx.so.1.2.3 -> libx.so (only for classes that version on disk)
        head, dot, tail = stripped.rpartition(".")
        if not dot or not tail.isdigit() or not head:
            break
        stripped = head
    if stripped != name:
        candidates.append(stripped)
    for i, cand in enumerate(candidates):
        if "." not in cand:
            continue
        ext = "." + cand.rsplit(".", 1)[1]
        for cls, exts in classes.items():
            if ext in exts and (i == 0 or cls in versioned):
                return cls, ext
    return None


# -- the boundary -------------------------------------------------------------------------------


@record
class Denial:
    """Why a need does not fit: the plane, the value as given and canonical, and a reason."""

    plane: str
    value: str | None
    canonical: str | None
    reason: str
    rule: ToolRule | None = None


@record
class Boundary:
    """A ``permits:`` block as plain data. ``declared`` is False for an absent block (zero
    authority). ``exec`` is ``False``, ``True`` or the program names."""

    declared: bool
    fs_read: tuple[str, ...] = ()
    fs_write: tuple[str, ...] = ()
    net_http: tuple[str, ...] = ()
    exec: bool | tuple[str, ...] = False
    tools: tuple[ToolRule, ...] = field(default=())
    env: tuple[str, ...] = ()

    @classmethod
    def from_data(cls, permits: Mapping[str, Any] | None) -> Boundary:
        """From the plain ``permits:`` mapping a runtime holds (``None``: absent block)."""
        if permits is None:
            return cls(False)
        fs = permits.get("fs") or {}
        net = permits.get("net") or {}
        ex = permits.get("exec", False)
        return cls(
            True,
            tuple(_strs(fs.get("read"))),
            tuple(_strs(fs.get("write"))),
            tuple(_strs(net.get("http"))),
            ex if isinstance(ex, bool) else tuple(_strs(ex)),
            parse_tool_rules(_strs(permits.get("tools"))),
            tuple(_strs(permits.get("env"))),
        )

    def grants(self, plane: str) -> bool:
        """Whether the plane is granted at all (some entry exists)."""
        return {
            "fs.read": bool(self.fs_read),
            "fs.write": bool(self.fs_write),
            "net": bool(self.net_http),
            "exec": self.exec is not False and self.exec != (),
            "tools": any(not r.negated for r in self.tools),
            "env": bool(self.env),
        }.get(plane, False)

    def check(self, plane: str, value: str | None = None, *, directory: bool = False) -> Denial | None:
        """``None`` when a need of ``plane`` (with this concrete target, if any) fits.

        ``directory``: the value is a directory the tool creates files under; it fits when a
        grant covers the directory or something inside it (the files are re-judged by name at
        run time)."""
        if not self.declared:
            return Denial(plane, value, None, "the workflow declares no `permits:` block")
        if plane in ("fs.read", "fs.write"):
            globs = self.fs_read if plane == "fs.read" else self.fs_write
            if not globs:
                return Denial(plane, value, None, f"`permits.{plane}` grants nothing")
            if value is None:
                return None
            canon = canonical_path(value)
            if any(match_path(g, value) for g in globs):
                return None
            if directory and any(_inside(canonical_path(g), canon) for g in globs):
                return None
            return Denial(plane, value, canon, f"`{canon}` lies outside `permits.{plane}`")
        if plane == "net":
            if not self.net_http:
                return Denial(plane, value, None, "`permits.net.http` grants nothing")
            if value is None:
                return None
            host = canonical_host(value)
            if any(e.strip() == "*" or canonical_host(e) == host for e in self.net_http):
                return None
            return Denial(plane, value, host, f"host `{host}` is not in `permits.net.http`")
        if plane == "exec":
            if self.exec is False or self.exec == ():
                return Denial(plane, value, None, "`permits.exec` does not allow processes")
            if self.exec is True or value is None:
                return None
            if value in self.exec:
                return None
            return Denial(plane, value, value, f"program `{value}` is not in `permits.exec`")
        if plane == "tools":
            if value is None:
                return None if self.grants("tools") else Denial(plane, None, None, "`permits.tools` grants nothing")
            rule = tool_verdict(self.tools, value)
            if rule is None:
                return Denial(plane, value, value, f"`{value}` matches no entry of `permits.tools`")
            if rule.negated:
                return Denial(plane, value, value, f"`{value}` is excluded by `!{rule.pattern}`", rule)
            return None
        if plane == "env":
            if value is not None and value in self.env:
                return None
            return Denial(plane, value, value, f"`{value}` is not in `permits.env`")
        return Denial(plane, value, None, f"unknown plane `{plane}`")


def _inside(glob: str, directory: str) -> bool:
    if directory == ".":
        return not glob.startswith(("/", ".."))
    return glob.startswith(directory + "/")


def _strs(v: Any) -> Iterable[str]:
    if isinstance(v, list | tuple):
        return [x for x in v if isinstance(x, str)]
    return []


def boundary_of(permits: Permits | None) -> Boundary:
    """The model's ``permits:`` block as a :class:`Boundary` (template entries grant nothing)."""
    if permits is None:
        return Boundary(False)

    def lits(xs: tuple[ScalarValue, ...]) -> tuple[str, ...]:
        return tuple(x.value for x in xs if not isinstance(x, TemplateValue))

    ex = permits.exec
    return Boundary(
        True,
        lits(permits.fs_read),
        lits(permits.fs_write),
        lits(permits.net_http),
        ex if isinstance(ex, bool) else (lits(ex) if ex is not None else False),
        parse_tool_rules(lits(permits.tools)),
        lits(permits.env),
    )
