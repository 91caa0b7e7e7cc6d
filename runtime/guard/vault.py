"""The local ``nika-vault`` (spec 01 §secrets: ``source: vault``, the default source): named
values a workflow reads as ``secrets.X`` with ``key:`` the vault path.

Two stores behind one interface, chosen by engine configuration:

- ``NIKA_VAULT_FILE`` set: a JSON file at that path, created owner-only (``0600``) — the store a
  CI or a container uses.
- otherwise the operating system's keyring through ``keyring`` (service ``nika-vault``; the key
  names are kept in one extra entry, since keyrings cannot list). A machine without a keyring gets
  a one-line error that names ``NIKA_VAULT_FILE``.

``nika secrets set/get/list/rm`` manage it (:mod:`nika.commands.secrets`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

VAULT_FILE_ENV = "NIKA_VAULT_FILE"
SERVICE = "nika-vault"
_INDEX = "\0index"


class VaultError(Exception):
    """The vault cannot be opened or read (one line, never a value)."""


class Vault(Protocol):
    where: str

    def get(self, key: str) -> str | None: ...

    def set(self, key: str, value: str) -> None: ...

    def remove(self, key: str) -> bool: ...

    def names(self) -> list[str]: ...


class FileVault:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = f"file {path}"

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            raise VaultError(f"the vault file {self.path} cannot be read: {type(e).__name__}") from None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise VaultError(f"the vault file {self.path} is not a JSON object of strings")
        return data

    def _save(self, data: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, self.path)

    def get(self, key: str) -> str | None:
        return self._load().get(key)

    def set(self, key: str, value: str) -> None:
        data = self._load()
        data[key] = value
        self._save(data)

    def remove(self, key: str) -> bool:
        data = self._load()
        if key not in data:
            return False
        del data[key]
        self._save(data)
        return True

    def names(self) -> list[str]:
        return sorted(self._load())


class KeyringVault:
    def __init__(self) -> None:
        try:
            import keyring
            from keyring.errors import KeyringError
        except ImportError as e:  # a base install: the keyring comes with the `vault` extra
            from checker.contracts.extras import extra

            raise VaultError(
                f"the nika-vault in the OS keyring needs the `vault` extra ({e.name or 'keyring'} not installed): "
                f"{extra('vault').install}, or set {VAULT_FILE_ENV} to keep the vault in a file"
            ) from None

        self._kr, self._err = keyring, KeyringError
        backend = keyring.get_keyring()
        if getattr(backend, "priority", 1) <= 0:
            raise VaultError(
                f"this machine has no OS keyring for the nika-vault; set {VAULT_FILE_ENV} to a file path to keep "
                "the vault in a file instead"
            )
        self.where = f"OS keyring ({type(backend).__module__})"

    def _call(self, fn: str, *args: str) -> str | None:
        try:
            return getattr(self._kr, fn)(SERVICE, *args)
        except self._err as e:
            raise VaultError(f"the OS keyring refused `{fn}`: {type(e).__name__}") from None

    def get(self, key: str) -> str | None:
        return self._call("get_password", key)

    def names(self) -> list[str]:
        raw = self._call("get_password", _INDEX)
        return sorted(json.loads(raw)) if raw else []

    def set(self, key: str, value: str) -> None:
        self._call("set_password", key, value)
        self._call("set_password", _INDEX, json.dumps(sorted({*self.names(), key})))

    def remove(self, key: str) -> bool:
        names = self.names()
        if key not in names:
            return False
        self._call("delete_password", key)
        self._call("set_password", _INDEX, json.dumps([n for n in names if n != key]))
        return True


def open_vault(env: Mapping[str, str]) -> Vault:
    path = env.get(VAULT_FILE_ENV)
    if path:
        return FileVault(Path(path).expanduser())
    return KeyringVault()
