"""Mutation-proof ticket checks (issue 38, item 8): planted mutants of the ticket's scope, nonce,
content-hash, seal, TTL and claim checks (runtime/durable/ticket.py) are each killed by the checks
below, which the real module passes. A mutant of the ticket check survived the last review: here
every check is shown to fail when its line is broken.

Each mutant is a textual edit of the module's source (the text it replaces must be there, so a
refactor that moves a check makes this test fail loudly instead of testing nothing); the mutated
module is loaded on its own, never in place of the real one."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import threading
import types
from collections.abc import Callable
from pathlib import Path

import pytest

import runtime.durable.ticket as real

SOURCE = Path(real.__file__).read_text(encoding="utf-8")
H1, H2 = "sha256:" + "1" * 64, "sha256:" + "2" * 64


def load(source: str) -> types.ModuleType:
    """The module made from ``source``, on its own (never in place of the real one)."""
    name = f"ticket_mutant_{abs(hash(source))}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up while the class is made
    try:
        exec(compile(source, real.__file__, "exec"), mod.__dict__)
    finally:
        del sys.modules[name]
    return mod


# -- the checks (each returns normally on the real module) ---------------------------------------


def honours_its_own_ticket(m: types.ModuleType, tmp: Path) -> None:
    t = m.mint("run-A", "approve", H1, 1000.0)
    assert m.check(t, nonces={"run-A"}, step="approve", shown_hash=H1, now=1001.0) is None


def refuses_another_runs_nonce(m: types.ModuleType, tmp: Path) -> None:
    t = m.mint("run-A", "approve", H1, 1000.0)
    got = m.check(t, nonces={"run-B", "run-C"}, step="approve", shown_hash=H1, now=1001.0)
    assert got is not None and got[0] == "approval.scope_mismatch"


def refuses_another_step(m: types.ModuleType, tmp: Path) -> None:
    t = m.mint("run-A", "approve", H1, 1000.0)
    got = m.check(t, nonces={"run-A"}, step="publish", shown_hash=H1, now=1001.0)
    assert got is not None and got[0] == "approval.scope_mismatch"


def refuses_other_content(m: types.ModuleType, tmp: Path) -> None:
    t = m.mint("run-A", "approve", H1, 1000.0)
    got = m.check(t, nonces={"run-A"}, step="approve", shown_hash=H2, now=1001.0)
    assert got is not None and got[0] == "approval.content_mismatch"


def refuses_a_ticket_edited_after_minting(m: types.ModuleType, tmp: Path) -> None:
    t = {**m.mint("run-A", "approve", H1, 1000.0), "ttl_s": 10**9}  # a longer life, written in by hand
    got = m.check(t, nonces={"run-A"}, step="approve", shown_hash=H1, now=1001.0)
    assert got is not None and got[0] == "approval.scope_mismatch"
    forged = {**t, "run": "run-B"}
    assert m.check(forged, nonces={"run-B"}, step="approve", shown_hash=H1, now=1001.0) is not None


def expires(m: types.ModuleType, tmp: Path) -> None:
    t = m.mint("run-A", "approve", H1, 1000.0)
    got = m.check(t, nonces={"run-A"}, step="approve", shown_hash=H1, now=1000.0 + m.TICKET_TTL_S + 1)
    assert got is not None and got[0] == "approval.expired"


def spends_a_ticket_once(m: types.ModuleType, tmp: Path) -> None:
    t = m.mint("run-A", "approve", H1, 1000.0)
    assert m.claim(tmp, t, True, by="one", now=1001.0).status == "claimed"
    second = m.claim(tmp, t, True, by="two", now=1002.0)
    assert second.status == "already_claimed" and not second.ok
    assert m.read_claim(tmp, t["digest"]).by == "one"


def a_deny_is_final(m: types.ModuleType, tmp: Path) -> None:
    t = m.mint("run-A", "approve", H1, 1000.0)
    assert m.claim(tmp, t, False, by="one", now=1001.0).status == "claimed"
    assert m.claim(tmp, t, True, by="two", now=1002.0).status == "already_claimed"


def revokes_only_before_the_action_starts(m: types.ModuleType, tmp: Path) -> None:
    t = m.mint("run-A", "approve", H1, 1000.0)
    m.claim(tmp, t, True, by="one", now=1001.0)
    assert m.commit(tmp, t["digest"], by="run", now=1002.0) == "started"
    late = m.claim(tmp, t, False, by="two", now=1003.0)
    assert late.status == "too_late" and not late.ok
    u = m.mint("run-A", "approve", H2, 1000.0)
    m.claim(tmp, u, True, by="one", now=1001.0)
    assert m.claim(tmp, u, False, by="two", now=1002.0).status == "revoked"
    assert m.commit(tmp, u["digest"], by="run", now=1003.0) == "revoked"  # the action must not start


def two_racing_claims_have_one_winner(m: types.ModuleType, tmp: Path) -> None:
    """Both claimants are held at the moment their claim is placed (the claim written, any check
    made): a check-then-write lets both through; an exclusive placement lets one."""
    t = m.mint("run-A", "approve", H1, 1000.0)
    hold = threading.Barrier(2, timeout=10)
    fake = types.SimpleNamespace(**{k: getattr(real.os, k) for k in dir(real.os) if not k.startswith("__")})

    def held(call: Callable[..., object]) -> Callable[..., object]:
        def placing(*args: object, **kwargs: object) -> object:
            if threading.current_thread().name.startswith("claimant"):
                with contextlib.suppress(threading.BrokenBarrierError):
                    hold.wait()
            return call(*args, **kwargs)

        return placing

    for name in ("link", "replace", "rename"):
        setattr(fake, name, held(getattr(real.os, name)))
    m.os = fake
    got: list[str] = []

    def claimant(k: int) -> None:
        got.append(m.claim(tmp, t, True, by=f"c{k}", now=1001.0).status)

    threads = [threading.Thread(target=claimant, args=(k,), name=f"claimant-{k}") for k in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(20)
    assert sorted(got) == ["already_claimed", "claimed"], got


CHECKS: list[Callable[[types.ModuleType, Path], None]] = [
    honours_its_own_ticket,
    refuses_another_runs_nonce,
    refuses_another_step,
    refuses_other_content,
    refuses_a_ticket_edited_after_minting,
    expires,
    spends_a_ticket_once,
    a_deny_is_final,
    revokes_only_before_the_action_starts,
    two_racing_claims_have_one_winner,
]

# (what the mutant breaks, the source it replaces, the replacement)
MUTANTS = [
    ("nonce", 'if ticket.get("run") not in nonces:', "if False:"),
    ("scope", 'if ticket.get("step") != step:', "if False:"),
    ("content-hash", 'if shown_hash is not None and ticket.get("shown_hash") != shown_hash:', "if False:"),
    ("content-hash, only when asked", "if shown_hash is not None and", "if shown_hash is None and"),
    ("seal", 'return ticket["digest"] == sha256({k: v for k, v in ticket.items() if k != "digest"})', "return True"),
    ("ttl", "if remaining(ticket, now) <= 0:", "if remaining(ticket, now) < -1e12:"),
    ("claim: exclusive placement", "        os.link(tmp, path)\n", "        os.replace(tmp, path)\n"),
    (
        "claim: check-then-write",
        "        os.link(tmp, path)\n        created = True\n",
        "        if path.exists():\n            raise FileExistsError(path)\n"
        "        os.replace(tmp, path)\n        created = True\n",
    ),
    ("claim: a taken claim ignored", "    if _create(claim_path, new.to_json()):", "    if True:"),
    (
        "claim: deny not final",
        'if old.decision == "allow" and new.decision == "deny":',
        "if new.decision != old.decision:",
    ),
    ("revoke after start", 'if fate(directory, new.digest) == "started":', "if False:"),
    ("commit ignores a revocation", '    return fate(directory, digest) or "revoked"', '    return "started"'),
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_the_real_ticket_module_passes_every_check(check: Callable[..., None], tmp_path: Path) -> None:
    check(load(SOURCE), tmp_path)


@pytest.mark.parametrize(("name", "old", "new"), MUTANTS, ids=[m[0] for m in MUTANTS])
def test_each_planted_mutant_is_killed(name: str, old: str, new: str, tmp_path: Path) -> None:
    assert SOURCE.count(old) == 1, f"the mutant `{name}` no longer applies: the check moved; plant it anew"
    mutant = load(SOURCE.replace(old, new))
    killed_by = []
    for i, check in enumerate(CHECKS):
        folder = tmp_path / str(i)
        folder.mkdir()
        try:
            check(mutant, folder)
        except AssertionError:
            killed_by.append(check.__name__)
    assert killed_by, f"the mutant `{name}` survived every check"
