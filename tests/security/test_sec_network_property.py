"""Properties of the network plane's judges, on plain data, in process: a fixed-seed slice of
150 cases each in the default suite, a thousand each in `.ci/run campaigns` (tests/suite_size.py).

* Egress (spec 01 §egress): Hypothesis draws a secret, its `egress:` rules, a redirect chain over a
  few hosts and where the request carries the secret (a bearer or custom header, `Basic` user info,
  a JSON or form body, the query); the chain is walked as the fetch client walks it (each hop
  judged before it is sent, a refusal ends it). Asserted: the secret is seen wherever the engine
  put it, and no hop that carries it is sent to a host its rules do not sanction (a moved hop only
  to a host a `host:` rule names; never from https down to http).
* Decoding: any stack of content codings, any chunking, any cap: the decoder returns the body
  exactly when it fits and is encoded once, refuses otherwise, and never hands out more than the
  cap or a piece larger than its step.
* Recipients (builtins §notify, spec 10): whatever the target list holds, a message goes only to
  well-formed addresses without a control or separator character, at most the bound, and, when the
  target is computed, only to granted ones.
"""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from urllib.parse import quote, urlencode

from hypothesis import given, settings
from hypothesis import strategies as st
from suite_size import examples

from runtime.errors import TaskError
from runtime.net import egress
from runtime.net.decode import STEP, BodyRefused, BoundedDecoder
from runtime.net.mail import MAX_RECIPIENTS, bad_header_char, judge_recipients

HOSTS = ["billing.corp.test", "cdn.corp.test", "sink.elsewhere.test", "127.0.0.2"]
SINKS = ["nika:fetch", "nika:notify"]

secrets_ = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=4, max_size=24).filter(
    lambda s: s.strip() == s and len(s.strip()) >= 4
)
rules_ = st.lists(
    st.one_of(
        st.builds(egress.Rule, st.sampled_from(SINKS), st.sampled_from(HOSTS)),
        st.builds(egress.Rule, st.sampled_from(SINKS)),
        st.builds(egress.Rule, st.sampled_from([*SINKS, "exec", "outputs"])),
    ),
    max_size=3,
)
placements = st.sampled_from(["bearer", "custom", "basic", "json", "form", "query", "none"])


def _request(secret: str, placement: str, user: str) -> tuple[str, dict[str, str], bytes]:
    """The URL suffix, headers and body of a request carrying ``secret`` as the engine would send it."""
    headers: dict[str, str] = {"accept": "*/*"}
    body, query = b"", ""
    if placement == "bearer":
        headers["authorization"] = f"Bearer {secret}"
    elif placement == "custom":
        headers["x-api-token"] = secret
    elif placement == "basic":
        headers["authorization"] = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()
    elif placement == "json":
        body = json.dumps({"note": "x", "token": secret}, ensure_ascii=False).encode()
    elif placement == "form":
        body = urlencode({"token": secret, "n": "1"}).encode()
    elif placement == "query":
        query = "?k=" + quote(secret, safe="")
    return query, headers, body


@settings(max_examples=examples(1000, 150))
@given(
    secrets_,
    rules_,
    st.sampled_from(SINKS),
    st.lists(st.tuples(st.sampled_from(["http", "https"]), st.sampled_from(HOSTS)), min_size=1, max_size=5),
    placements,
    st.text(alphabet="abcdefghij", min_size=0, max_size=5),
)
def test_no_secret_leaves_its_sanction_along_any_redirect_chain(
    secret: str, rules: list[egress.Rule], sink: str, chain: list[tuple[str, str]], placement: str, user: str
) -> None:
    held = egress.Held("tok", secret, tuple(rules))
    query, headers, body = _request(secret, placement, user)
    first_scheme, first_host = chain[0]
    for i, (scheme, host) in enumerate(chain):
        url = f"{scheme}://{host}/p{query}"
        carried = egress.carried([held], url, headers, body)
        by_chance = secret in url or any(secret in v for v in headers.values())  # e.g. a secret "corp"
        assert bool(carried) == (placement != "none" or by_chance), (placement, carried)
        hop = egress.Hop(sink, scheme, host, i, first_host, first_scheme, carried)
        if egress.refusal(hop) is not None:
            break  # refused: not sent, the chain ends here
        if carried:  # sent with the secret: the sanction must hold at this hop
            mine = [r for r in rules if r.to == sink]
            assert any(r.host is None or r.host == host for r in mine)
            if i and host != first_host:
                assert any(r.host == host for r in mine)
            if i:
                assert not (first_scheme == "https" and scheme == "http")


codings = st.lists(st.sampled_from(["gzip", "deflate", "identity", "x-gzip", "br"]), max_size=3)


def _encode(data: bytes, layers: list[str]) -> bytes:
    for c in layers:
        if c in ("gzip", "x-gzip"):
            data = gzip.compress(data, mtime=0)
        elif c == "deflate":
            data = zlib.compress(data)
    return data


@settings(max_examples=examples(1000, 150))
@given(
    st.one_of(st.binary(max_size=2048), st.integers(0, 300_000).map(lambda n: b"\0" * n)),
    codings,
    st.integers(1, 200_000),
    st.integers(1, 4096),
)
def test_nothing_unbounded_is_decoded(data: bytes, layers: list[str], cap: int, chunk: int) -> None:
    wire = _encode(data, [c for c in layers if c != "br"])
    applied = [c for c in layers if c != "identity"]
    header = ", ".join(layers) if layers else None
    out = bytearray()
    chunk = max(chunk, len(wire) // 64)  # any split, at most 64 reads (cheap)
    try:
        d = BoundedDecoder(header, cap)
        for i in range(0, len(wire), chunk):
            for piece in d.feed(wire[i : i + chunk]):
                assert len(piece) <= STEP
                out += piece
        for piece in d.close():
            out += piece
    except BodyRefused as e:
        assert len(out) <= cap
        assert len(applied) > 1 or "br" in applied or len(data) > cap, e.why
        return
    assert len(applied) <= 1 and "br" not in applied
    assert bytes(out) == data and len(data) <= cap


addresses = st.one_of(
    st.sampled_from(["ops@corp.example", "Ops Team <ops@corp.example>", "x@team.example", "evil@else.example"]),
    st.builds(
        lambda a, b, c: f"{a}{c}@{b}.example",
        st.text(alphabet="abcxyz.", min_size=1, max_size=6),
        st.sampled_from(["corp", "team", "else"]),
        st.sampled_from(["", "\r\n", "\x00", "\x0b", "\u2028", "\u2029", "\x85", "\u200b", ",", "@", " "]),
    ),
)


@settings(max_examples=examples(1000, 150))
@given(
    st.lists(addresses, min_size=1, max_size=14),
    st.booleans(),
    st.sampled_from(["", "@team.example", "ops@corp.example"]),
)
def test_mail_goes_only_where_it_may(targets: list[str], trusted: bool, grants: str) -> None:
    target = ", ".join(targets)
    try:
        sent = judge_recipients(target, trusted=trusted, grants=grants)
    except TaskError as e:
        assert e.code in ("NIKA-BUILTIN-NOTIFY-001", "NIKA-SEC-004")
        return
    assert 1 <= len(sent) <= MAX_RECIPIENTS
    for addr in sent:
        assert bad_header_char(addr) is None and addr.count("@") == 1
        if not trusted:
            assert addr.lower() == grants or (grants.startswith("@") and addr.lower().endswith(grants))
