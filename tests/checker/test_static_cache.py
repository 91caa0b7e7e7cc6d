"""`checker.core.static_cache`: a value comes back only for its own key, and a cache that cannot
be used is the same as no cache (never an error, never another answer)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from checker.core import static_cache

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NIKA_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_round_trip_and_key(cache_dir: Path) -> None:
    value = {"a": (1, 2.5, "x"), "b": frozenset({"y"}), "c": [None, True]}
    static_cache.store("t", ("k", 1), value)
    assert static_cache.load("t", ("k", 1)) == value
    assert static_cache.load("t", ("k", 2)) is None  # another key: nothing
    assert static_cache.load("other", ("k", 1)) is None


def test_stamp_changes_with_the_file(tmp_path: Path) -> None:
    f = tmp_path / "data.toml"
    f.write_text("a = 1\n")
    before = static_cache.stamp([str(f)])
    f.write_text("a = 22\n")
    assert static_cache.stamp([str(f)]) != before
    assert static_cache.stamp([str(tmp_path / "missing")]) == ((str(tmp_path / "missing"), -1, -1, -1),)


def test_a_same_size_edit_under_a_pinned_timestamp_changes_the_stamp(tmp_path: Path) -> None:
    """A reproducible build pins every file's modification time: an edit of the same size must
    still be told apart (by the bytes' checksum)."""
    import os

    f = tmp_path / "data.toml"
    f.write_text("a = 1\n")
    os.utime(f, ns=(10**18, 10**18))
    before = static_cache.stamp([str(f)])
    f.write_text("a = 2\n")
    os.utime(f, ns=(10**18, 10**18))
    assert static_cache.stamp([str(f)]) != before


def test_a_key_stamped_from_an_unreadable_file_is_never_stored(cache_dir: Path, tmp_path: Path) -> None:
    key = static_cache.stamp([str(tmp_path / "missing")])
    static_cache.store("t", key, {"v": 1})
    assert static_cache.load("t", key) is None


def test_a_broken_file_is_no_cache(cache_dir: Path) -> None:
    static_cache.store("t", "k", [1, 2])
    (target,) = cache_dir.iterdir()
    target.write_bytes(target.read_bytes()[:7])  # truncated
    assert static_cache.load("t", "k") is None
    target.write_bytes(b"\xff\x00garbage")
    assert static_cache.load("t", "k") is None


def test_unwritable_or_off_is_silent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("NIKA_CACHE_DIR", str(blocker / "cache"))
    static_cache.store("t", "k", 1)  # cannot create the folder: nothing happens
    assert static_cache.load("t", "k") is None
    built = []
    got = static_cache.cached("t", "k", lambda: built.append(1) or 41, dump=lambda v: v, undump=lambda v: v)
    assert got == 41 and built == [1]
    monkeypatch.setenv("NIKA_CACHE_DIR", "off")
    assert static_cache.folder() is None
    static_cache.store("t", "k", 1)
    assert static_cache.load("t", "k") is None


def test_the_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("NIKA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert static_cache.folder() == str(tmp_path / "nika")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # ignored, as the XDG rules say
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert static_cache.folder() == str(tmp_path / "home" / ".cache" / "nika")
    assert static_cache.named("t", "/a/b") != static_cache.named("t", "/a/c")


def test_cached_builds_once_then_reads(cache_dir: Path) -> None:
    calls: list[int] = []

    def build() -> frozenset[str]:
        calls.append(1)
        return frozenset({"a", "b"})

    first = static_cache.cached("t", "k", build, dump=sorted, undump=frozenset)
    second = static_cache.cached("t", "k", build, dump=sorted, undump=frozenset)
    assert first == second == frozenset({"a", "b"}) and calls == [1]
    bad = static_cache.cached("t", "k", build, dump=sorted, undump=lambda v: v["no"])  # unreadable: rebuilt
    assert bad == first and calls == [1, 1]


def test_check_output_is_the_same_cold_warm_and_without_cache(tmp_path: Path) -> None:
    """The records' compiled methods and the static tables come from the cache on the second run."""
    target = ROOT / "examples" / "deploy-gate.nika.yaml"
    outs = []
    for where in (str(tmp_path / "c"), str(tmp_path / "c"), "off"):
        env = {"PYTHONPATH": str(ROOT), "NIKA_CACHE_DIR": where, "PATH": "/usr/bin:/bin"}
        p = subprocess.run(
            [sys.executable, "-m", "nika", "check", "--output-format", "json", str(target)],
            capture_output=True,
            text=True,
            env=env,
            cwd=str(tmp_path),
            check=False,
        )
        outs.append((p.returncode, p.stdout, p.stderr))
    assert outs[0] == outs[1] == outs[2]
    assert any((tmp_path / "c").iterdir())  # the first run filled the cache
