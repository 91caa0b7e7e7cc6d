"""The envelope's declarations (01): ``types``, ``inputs``, ``config``, ``const``, ``secrets``,
``permits``, ``run`` and ``policy``."""

from __future__ import annotations

import re

from checker.compiler.builder import Builder, shown
from checker.grammar import table as G
from checker.model.workflow import Config, Const, Egress, Input, Permits, Policy, RunSettings, Secret, TypeDecl
from checker.parse.values import ListValue, MapValue, ScalarValue, Value, describe

PASCAL_RE = re.compile(r"^[A-Z][A-Za-z0-9]*\Z")


def _section(b: Builder, root: MapValue, name: str) -> MapValue | None:
    node = root.get(name)
    if node is None or (isinstance(node, ScalarValue) and node.value is None):
        return None
    return b.expect_mapping(node, f"`{name}:`")


def types(b: Builder, root: MapValue) -> tuple[TypeDecl, ...]:
    m = _section(b, root, "types")
    if m is None:
        return ()
    out = []
    for name, e in m.items():
        if not PASCAL_RE.match(name):
            b.err(
                "NIKA-TYPE-001",
                e.key.span,
                f"type name `{name}` is not PascalCase",
                "Name types like `Article` or `SearchResult`: an uppercase letter, then letters and digits.",
            )
        out.append(TypeDecl(name, e.key, e.value))
    return tuple(out)


def _io_entry(b: Builder, section: str, block: G.Block, name: str, node: Value, key: Value) -> MapValue | None:
    m = b.expect_mapping(node, f"`{section}.{name}`")
    if m is None:
        return None
    b.closed(m, block, f"`{section}.{name}`")
    if "type" not in m:
        b.err(
            "NIKA-PARSE-019",
            key.span,
            f"`{section}.{name}` has no `type:`",
            "Declare its type, e.g. `type: string`.",
        )
    b.check_fields(block, m, skip=("type", "default"))
    v = m
    return v


def _text(v: Value | None) -> str | None:
    return v.value if isinstance(v, ScalarValue) and isinstance(v.value, str) else None


def inputs(b: Builder, root: MapValue) -> tuple[Input, ...]:
    m = _section(b, root, "inputs")
    if m is None:
        return ()
    out = []
    for name, e in m.items():
        key = e.key
        v = _io_entry(b, "inputs", G.INPUT, name, e.value, e.key)
        if v is None:
            out.append(Input(name, key, e.value))
            continue
        req = v.get("required")
        required = isinstance(req, ScalarValue) and req.value is True
        out.append(Input(name, key, v, v.get("type"), required, v.get("default"), _text(v.get("description"))))
    return tuple(out)


def config(b: Builder, root: MapValue) -> tuple[Config, ...]:
    m = _section(b, root, "config")
    if m is None:
        return ()
    out = []
    for name, e in m.items():
        key = e.key
        v = _io_entry(b, "config", G.CONFIG, name, e.value, e.key)
        if v is None:
            out.append(Config(name, key, e.value))
            continue
        out.append(Config(name, key, v, v.get("type"), v.get("default"), _text(v.get("description"))))
    return tuple(out)


def const(b: Builder, root: MapValue) -> tuple[Const, ...]:
    m = _section(b, root, "const")
    if m is None:
        return ()
    out = []
    for name, e in m.items():
        key = e.key
        node = e.value
        v = node
        if isinstance(node, MapValue) and "type" in node and "value" in node:
            b.closed(node, G.TYPED_CONST, f"`const.{name}`")
            b.check_fields(G.TYPED_CONST, node, skip=("type", "value"))
            assert isinstance(v, MapValue)
            out.append(Const(name, key, v, v.get("type"), v.get("value")))
        else:
            out.append(Const(name, key, v, None, v))
    return tuple(out)


def secrets(b: Builder, root: MapValue) -> tuple[Secret, ...]:
    m = _section(b, root, "secrets")
    if m is None:
        return ()
    out = []
    for name, e in m.items():
        key = e.key
        fields = _secret_fields(b, name, e.value, e.key)
        v = e.value
        if fields is None or not isinstance(v, MapValue):
            out.append(Secret(name, key, v))
            continue
        source, egress = fields
        out.append(Secret(name, key, v, source, _text(v.get("key")), _text(v.get("path")), egress))
    return tuple(out)


def _secret_fields(b: Builder, name: str, v: Value, key: Value) -> tuple[str | None, tuple[Egress, ...]] | None:
    if not isinstance(v, MapValue):
        b.err(
            "NIKA-PARSE-014",
            v.span,
            f"secret `{name}` is an inline value, not a store reference",
            "Point at a store instead, e.g. `{source: env, key: MY_TOKEN}`; never write secret values in the file.",
        )
        return None
    b.closed(v, G.SECRET, f"`secrets.{name}`")
    src = v.get("source")
    if src is None:
        b.err(
            "NIKA-PARSE-014",
            key.span,
            f"secret `{name}` has no `source:`",
            "Add `source: vault`, `source: env` or `source: file`.",
        )
        return None
    sv = src.value if isinstance(src, ScalarValue) else None
    if sv not in G.SECRET_SOURCES:
        b.err(
            "NIKA-PARSE-014",
            src.span,
            f"unknown secret source `{shown(src)}`",
            "Use one of vault, env or file.",
        )
        return None
    if sv == "file":
        if "path" not in v:
            b.err("NIKA-PARSE-014", src.span, f"secret `{name}` reads a file but has no `path:`", "Add `path: …`.")
        if (ke := v.entry("key")) is not None:
            b.err(
                "NIKA-PARSE-014", ke.key.span, "`key:` does not apply to `source: file`", "Remove `key:`; use `path:`."
            )
    else:
        if "key" not in v:
            b.err(
                "NIKA-PARSE-014",
                src.span,
                f"secret `{name}` has no `key:`",
                f"Add the {sv} key, e.g. `key: API_TOKEN`.",
            )
        if (pe := v.entry("path")) is not None:
            b.err(
                "NIKA-PARSE-014", pe.key.span, "`path:` only applies to `source: file`", "Remove `path:`; use `key:`."
            )
    for f in ("key", "path"):
        b.check_field(G.SECRET, v, f)
    return str(sv), _egress(b, v.get("egress"))


def _egress(b: Builder, eg: Value | None) -> tuple[Egress, ...]:
    if eg is None:
        return ()
    if not isinstance(eg, ListValue):
        b.err("NIKA-PARSE-019", eg.span, "`egress:` must be a list of `{to: …}` entries")
        return ()
    out = []
    for item in eg.items:
        im = b.expect_mapping(item, "an `egress:` entry")
        if im is None:
            continue
        b.closed(im, G.EGRESS)
        if "to" not in im:
            b.err("NIKA-PARSE-019", im.span, "an `egress:` entry needs `to:`", "Name the sink, e.g. `to: exec`.")
        if "host" in im and "host_from_self" in im:
            b.err("NIKA-PARSE-019", im.span, "`host:` and `host_from_self:` exclude each other", "Keep one of them.")
        if not b.check_fields(G.EGRESS, im):
            continue
        to, host, hfs = im.get("to"), im.get("host"), im.get("host_from_self")
        out.append(
            Egress(
                to.value if isinstance(to, ScalarValue) else None,
                host.value if isinstance(host, ScalarValue) else None,
                isinstance(hfs, ScalarValue) and hfs.value is True,
                im.span,
            )
        )
    return tuple(out)


def _strings(v: Value | None) -> tuple[ScalarValue, ...]:
    if not isinstance(v, ListValue):
        return ()
    return tuple(i for i in v.items if isinstance(i, ScalarValue) and isinstance(i.value, str))


def permits(b: Builder, node: Value | None) -> Permits | None:
    if node is None:
        return None
    m = b.expect_mapping(node, "`permits:`")
    if m is None:
        return None
    b.closed(m, G.PERMITS)
    for key, sub in (("fs", G.PERMITS_FS), ("net", G.PERMITS_NET)):
        sm = b.expect_mapping(m.get(key), f"`permits.{key}`")
        if sm is None:
            continue
        b.closed(sm, sub)
        for k in sub.names:
            _string_list(b, sm.get(k), f"`permits.{key}.{k}`")
    ex = m.get("exec")
    if ex is not None and not (isinstance(ex, ScalarValue) and isinstance(ex.value, bool)):
        _string_list(b, ex, "`permits.exec`", also="true, false or ")
    for key in ("tools", "env"):
        _string_list(b, m.get(key), f"`permits.{key}`")
    v = m
    fs = v.get("fs")
    net = v.get("net")
    exv = v.get("exec")
    exec_: bool | tuple[ScalarValue, ...] | None = None
    if isinstance(exv, ScalarValue) and isinstance(exv.value, bool):
        exec_ = exv.value
    elif isinstance(exv, ListValue):
        exec_ = _strings(exv)
    return Permits(
        v,
        _strings(fs.get("read")) if isinstance(fs, MapValue) else (),
        _strings(fs.get("write")) if isinstance(fs, MapValue) else (),
        _strings(net.get("http")) if isinstance(net, MapValue) else (),
        exec_,
        _strings(v.get("tools")),
        _strings(v.get("env")),
    )


def _string_list(b: Builder, node: Value | None, what: str, also: str = "") -> None:
    if node is None:
        return
    if not isinstance(node, ListValue):
        b.err("NIKA-PARSE-019", node.span, f"{what} must be {also}a list of strings, not {describe(node)}")
        return
    for item in node.items:
        if not (isinstance(item, ScalarValue) and isinstance(item.value, str)):
            b.err("NIKA-PARSE-019", item.span, f"{what} entries must be strings, not {describe(item)}")


def run(b: Builder, node: Value | None) -> RunSettings | None:
    if node is None:
        return None
    m = b.expect_mapping(node, "`run:`")
    if m is None:
        return None
    b.closed(m, G.RUN)
    ent = m.get("entropy")
    entropy: str | None = None
    seed: int | None = None
    if ent is not None:
        if isinstance(ent, ScalarValue) and ent.value in G.ENTROPY_MODES:
            entropy = ent.value
        elif isinstance(ent, MapValue) and "seeded" in ent:
            entropy = "seeded"
            b.closed(ent, G.SEEDED)
            if b.check_field(G.SEEDED, ent, "seeded"):
                s = ent.get("seeded")
                seed = s.value if isinstance(s, ScalarValue) else None
        else:
            b.err("NIKA-PARSE-019", ent.span, "`entropy:` must be none, ambient or `{seeded: N}`")
    clock: str | None = None
    if b.check_field(G.RUN, m, "clock") and isinstance(clk := m.get("clock"), ScalarValue):
        clock = clk.value
    if entropy == "ambient" and clock == "virtual":
        b.err(
            "NIKA-PARSE-026",
            m.span,
            "`entropy: ambient` contradicts `clock: virtual`",
            "Pair `clock: virtual` with `entropy: none` or `seeded`, or drop `clock: virtual`.",
        )
    if entropy in ("none", "seeded") and clock == "system":
        b.err(
            "NIKA-PARSE-027",
            m.span,
            f"`entropy: {entropy}` cannot ride `clock: system`",
            "Use `clock: virtual` with a deterministic entropy setting.",
        )
    v = m
    return RunSettings(v, entropy, seed, clock)


def policy(b: Builder, node: Value | None) -> Policy | None:
    if node is None:
        return None
    m = b.expect_mapping(node, "`policy:`")
    if m is None:
        return None
    b.closed(m, G.POLICY)
    b.check_fields(G.POLICY, m)
    subs: dict[str, MapValue] = {}
    for fam, block in G.POLICY_SUB.items():
        sm = b.expect_mapping(m.get(fam), f"`policy.{fam}`")
        if sm is not None:
            b.closed(sm, block)
            if b.check_fields(block, sm):
                subs[fam] = sm
    v = m

    def sub(fam: str, name: str) -> Value | None:
        fv = v.get(fam)
        return fv.get(name) if fam in subs and isinstance(fv, MapValue) else None

    allow = sub("allow", "providers")
    max_tasks = sub("limits", "max_tasks")
    optimize = v.get("optimize")
    endorsement = v.get("endorsement")
    return Policy(
        v,
        _strings(sub("require", "human_gate_before")),
        _strings(sub("forbid", "exec_after")),
        _strings(allow) if allow is not None else None,
        _strings(sub("prefer", "providers")),
        max_tasks.value if isinstance(max_tasks, ScalarValue) and isinstance(max_tasks.value, int) else None,
        _text(optimize) if _text(optimize) in G.OPTIMIZE_GOALS else None,
        _text(endorsement) if _text(endorsement) in G.ENDORSEMENTS else None,
    )
