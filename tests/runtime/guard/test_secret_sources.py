"""Every secret source at run (spec 01 §secrets): `env`, `file` (read at resolve time, `~`
expanded) and `vault` (the local nika-vault: a file store or the OS keyring), each value masked
by the one redactor wherever the run shows it."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from nika.commands.run import run_command
from runtime.errors import TaskError
from runtime.guard.redact import MASK
from runtime.guard.secrets import resolve
from runtime.guard.vault import FileVault, KeyringVault, VaultError, open_vault

FILE_SECRET = "file-secret-0123456789"
VAULT_SECRET = "vault-secret-9876543210"


def _decl(source: str, key: str | None = None, path: str | None = None) -> Any:
    return SimpleNamespace(name="s", source=source, store_key=key, path=path)


def test_file_source_reads_at_resolve_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "k.txt").write_text("line1\nline2\n")
    assert resolve(_decl("file", path="k.txt"), {}, tmp_path) == "line1\nline2"  # one trailing newline dropped
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".keys").mkdir()
    (tmp_path / ".keys" / "pem").write_text("PEM-1\r\n")
    assert resolve(_decl("file", path="~/.keys/pem"), {}, Path("/")) == "PEM-1"


@pytest.mark.parametrize(
    ("content", "why"), [(b"", "empty"), (b"\n", "empty"), (b"\xff\xfe", "not UTF-8"), (None, "cannot be read")]
)
def test_file_source_failures_are_typed(tmp_path: Path, content: bytes | None, why: str) -> None:
    if content is not None:
        (tmp_path / "k").write_bytes(content)
    with pytest.raises(TaskError) as e:
        resolve(_decl("file", path="k"), {}, tmp_path)
    assert e.value.code == "NIKA-VAR-001" and why in e.value.message


def test_file_vault_round_trip_is_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "v" / "vault.json"
    v = open_vault({"NIKA_VAULT_FILE": str(path)})
    assert isinstance(v, FileVault) and v.names() == [] and v.get("a/b") is None
    v.set("prod/api", "x1-key")
    v.set("a/b", "y2")
    assert v.names() == ["a/b", "prod/api"] and v.get("prod/api") == "x1-key"
    assert path.stat().st_mode & 0o777 == 0o600
    assert v.remove("a/b") and not v.remove("a/b") and v.names() == ["prod/api"]
    assert resolve(_decl("vault", key="prod/api"), {"NIKA_VAULT_FILE": str(path)}, tmp_path) == "x1-key"
    with pytest.raises(TaskError) as e:
        resolve(_decl("vault", key="nope"), {"NIKA_VAULT_FILE": str(path)}, tmp_path)
    assert e.value.code == "NIKA-VAR-001" and "nika secrets set nope" in e.value.message
    path.write_text("[1]")
    with pytest.raises(TaskError):
        resolve(_decl("vault", key="prod/api"), {"NIKA_VAULT_FILE": str(path)}, tmp_path)


def test_keyring_vault_with_an_in_memory_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """The keyring store lists through its index entry; a machine with no keyring says what to set."""
    import keyring  # the test extra installs [vault]
    from keyring.backend import KeyringBackend

    class Memory(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def __init__(self) -> None:
            self.data: dict[tuple[str, str], str] = {}

        def get_password(self, service: str, username: str) -> str | None:
            return self.data.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.data[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            self.data.pop((service, username))

    previous = keyring.get_keyring()
    keyring.set_keyring(Memory())
    try:
        v = open_vault({})
        assert isinstance(v, KeyringVault)
        v.set("k1", "v1")
        v.set("k2", "v2")
        assert v.names() == ["k1", "k2"] and v.get("k2") == "v2"
        assert v.remove("k1") and v.names() == ["k2"] and v.get("k1") is None
        from keyring.backends import fail

        keyring.set_keyring(fail.Keyring())
        with pytest.raises(VaultError, match="NIKA_VAULT_FILE"):
            open_vault({})
    finally:
        keyring.set_keyring(previous)


_WF = """\
nika: v1
workflow: { id: secrets-run }
permits: { exec: ["echo"] }
secrets:
  from_file: { source: file, path: key.txt, egress: [{ to: "exec" }] }
  from_vault: { source: vault, key: prod/api, egress: [{ to: "exec" }] }
tasks:
  show:
    exec: { command: ["echo", "f=${{ secrets.from_file }} v=${{ secrets.from_vault }}"] }
"""


def test_nika_run_resolves_file_and_vault_and_masks_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault_path = tmp_path / "vault.json"
    FileVault(vault_path).set("prod/api", VAULT_SECRET)
    monkeypatch.setenv("NIKA_VAULT_FILE", str(vault_path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "key.txt").write_text(FILE_SECRET + "\n")
    wf = tmp_path / "s.nika.yaml"
    wf.write_text(_WF)
    out, err = io.StringIO(), io.StringIO()
    code = run_command(str(wf), output_format="json", trace_dir=str(tmp_path / "traces"), out=out, err=err)
    journal = "".join(p.read_text() for p in (tmp_path / "traces").rglob("*") if p.is_file())
    assert code == 0, (out.getvalue(), err.getvalue())
    for where in (out.getvalue(), err.getvalue(), journal):
        assert FILE_SECRET not in where and VAULT_SECRET not in where
    assert json.loads(out.getvalue())["tasks"]["show"]["output"] == f"f={MASK} v={MASK}"


def test_nika_run_missing_vault_key_fails_the_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NIKA_VAULT_FILE", str(tmp_path / "empty.json"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "key.txt").write_text(FILE_SECRET)
    wf = tmp_path / "s.nika.yaml"
    wf.write_text(_WF)
    out, err = io.StringIO(), io.StringIO()
    code = run_command(str(wf), output_format="json", trace_dir=str(tmp_path / "traces"), out=out, err=err)
    report = json.loads(out.getvalue())
    assert code != 0 and report["tasks"]["show"]["error"]["code"] == "NIKA-VAR-001"
    assert "prod/api" in report["tasks"]["show"]["error"]["message"] and FILE_SECRET not in out.getvalue()
