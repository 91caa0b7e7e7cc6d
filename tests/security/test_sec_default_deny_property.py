"""Property: on plain data, nothing an untrusted source supplies makes a granted program read an
option, pick what it dispatches to, load code through its environment, or read a file outside
the grant.

The argv property plays the judge against a conservative model of how programs read their
words (GNU getopt: a word starting with `-` is an option until a `--`; a dispatching program's
first operand is what it runs, and the word after an option may be that option's value). The
env property composes a child environment from generated maps. The path property generates
spellings with `.`, `..`, doubled separators and symlinks on a real temporary tree.

The default suite draws a fixed-seed fifth of each search; `.ci/run campaigns` the whole
(tests/suite_size.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from suite_size import examples

from checker.contracts import effects
from checker.contracts.argv import Word, dispatch_kind, judge_argv
from checker.core.paths import under_roots

_TEXT = st.one_of(
    st.sampled_from(
        ["-x", "--long", "--opt=v", "-", "--", "plain", "sub", "a=b", "", "-9", " -x", "x-", "-c", "-m", "-e"]
    ),
    st.text(alphabet="-=abc./ ", max_size=6),
)
_WORD = st.builds(lambda t, u: Word(t, u, "" if u else t), _TEXT, st.booleans())
_PROGRAM = st.sampled_from(["git", "cargo", "lua", "env", "sqlite3", "hooky", "/usr/bin/python3"])


def _read_as_options(words: list[Word]) -> set[int]:
    """Indexes a getopt-style program may read as an option name."""
    out = set()
    for i, w in enumerate(words[1:], 1):
        if w.text == "--":
            break
        if w.text is not None and w.text.startswith("-") and w.text != "-":
            out.add(i)
    return out


def _dispatch_candidates(words: list[Word]) -> set[int]:
    """Indexes that may be what a dispatching program runs (every one, for a wrapper)."""
    kind = dispatch_kind(words[0].text or "")
    if kind is None:
        return set()
    if kind == "program":
        return set(range(1, len(words)))
    from checker.contracts.argv import _positions

    roles = _positions(words[0].text or "")  # the documented `-c SCRIPT` / `-m MODULE` options
    out = set()
    prev_option = False
    expect = None
    for i, w in enumerate(words[1:], 1):
        out.add(i)
        text = w.text or ""
        if expect is not None:
            if expect == "dispatch":
                break
            expect, prev_option = None, False
            continue
        if not w.untrusted and text in roles:
            expect = roles[text]
            continue
        like = text.startswith("-")
        if not like and not prev_option:
            break
        prev_option = like and text != "--" and "=" not in text
    return out


def _listed(text: str, grant: tuple[str, ...]) -> bool:
    """What the author listed: the word itself, or the name of a `--name=value` word."""
    return text in grant or (text.startswith("--") and "=" in text and text.split("=", 1)[0] in grant)


@settings(max_examples=examples(400, 80), deadline=None)
@given(_PROGRAM, st.lists(_WORD, max_size=6), st.lists(_TEXT, max_size=2))
def test_no_untrusted_word_is_read_as_an_option_or_a_dispatch(
    program: str, tail: list[Word], listed: list[str]
) -> None:
    words = [Word(program, False, program), *tail]
    grant = (program, *listed)
    refused = {f.index for f in judge_argv(words, grant)}
    risky = {
        i
        for i in _read_as_options(words) | _dispatch_candidates(words)
        if words[i].untrusted and not _listed(words[i].text or "", grant)
    }
    assert risky <= refused
    # and nothing trusted is ever refused
    assert all(words[i].untrusted for i in refused)


_NAMES = st.one_of(
    st.sampled_from(
        [
            "PATH",
            "HOME",
            "XDG_CONFIG_HOME",
            "GIT_DIR",
            "LD_PRELOAD",
            "PYTHONPATH",
            "KUBECONFIG",
            "HTTPS_PROXY",
            "MY_VAR",
        ]
    ),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True),
)


@settings(max_examples=examples(300, 60), deadline=None)
@given(st.dictionaries(_NAMES, st.tuples(st.text(max_size=8), st.booleans()), max_size=8))
def test_no_untrusted_value_lands_where_code_is_loaded_from(entries: dict[str, tuple[str, bool]]) -> None:
    from runtime.verbs.exec import compose_env

    admitted = {
        n: v for n, (v, untrusted) in entries.items() if effects.judge_env_value(n, untrusted=untrusted) is None
    }
    env = compose_env((), admitted, {"PATH": "/usr/bin", "HOME": "/home/engine"})
    for name, (value, untrusted) in entries.items():
        if name in env and env[name] == value and untrusted:
            assert effects.env_locator_class(name) is None and not effects.dangerous_env(name)
    assert not any(effects.dangerous_env(n) for n in env)


_SEGMENT = st.sampled_from(["in", "out", "..", ".", "", "link", "deep", "x.nika.yaml"])


@settings(max_examples=examples(300, 60), deadline=None)
@given(st.lists(_SEGMENT, min_size=1, max_size=6))
def test_no_spelling_reads_outside_the_root(tmp_path_factory, segments: list[str]) -> None:
    base = tmp_path_factory.getbasetemp() / "roots"
    root = base / "root"
    if not root.exists():
        (root / "in" / "deep").mkdir(parents=True)
        (base / "outside").mkdir()
        (root / "in" / "link").symlink_to(base / "outside")
        (root / "link").symlink_to(root / "in")
    path = os.path.join(str(root), *segments)
    if under_roots(path, (str(root),)):
        real = os.path.realpath(path)
        assert real == str(root.resolve()) or real.startswith(str(root.resolve()) + os.sep)
    assert not under_roots(str(Path(base) / "outside" / "x"), (str(root),))
