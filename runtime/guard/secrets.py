"""Resolving a declared secret (spec 01 §secrets) to its value: ``source: env`` (an engine
environment variable), ``file`` (a file's contents, read when the secret is first used; ``~``
expanded, relative paths from the working directory) or ``vault`` (the local nika-vault,
:mod:`runtime.guard.vault`). The caller remembers the value for the one redactor (:mod:`runtime.guard.redact`).

A file's one trailing newline is dropped (``echo value > file`` writes one); any other newline is
part of the value. An empty value, a value shorter than four characters (the redactor masks by
value, :data:`runtime.guard.redact.MIN_SECRET_CHARS`), a missing file or key, and a file over 1 MiB
fail as NIKA-VAR-001 naming the secret and where it was looked for, never the value.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from runtime.errors import TaskError
from runtime.guard.redact import MIN_SECRET_CHARS

CODE = "NIKA-VAR-001"
MAX_FILE_BYTES = 1024 * 1024
# Ours: how long a `source: file` secret may take to arrive when the file is a pipe (`/dev/fd/N`);
# a regular file is read at once. The read never waits longer, whatever the writer does.
SECRET_READ_DEADLINE_S = 5.0


def _missing(name: str, why: str, **details: Any) -> TaskError:
    return TaskError(CODE, f"secret `{name}` {why}", details={"secret": name, **details})


def resolve(decl: Any, env: Mapping[str, str], workdir: Path) -> str:
    """The value of the declared secret ``decl`` (``name``, ``source``, ``store_key``, ``path``)."""
    source = decl.source
    if source == "env":
        var = decl.store_key or decl.name
        value = env.get(var)
        if value is None:
            raise _missing(decl.name, f"reads `{var}` from the environment, which is not set", source="env")
    elif source == "file":
        value = _read_file(decl.name, decl.path or "", workdir)
    elif source == "vault":
        value = _from_vault(decl.name, decl.store_key or decl.name, env)
    else:
        raise _missing(decl.name, f"has an unknown source `{source}`")
    if value == "":
        raise _missing(decl.name, f"resolves to an empty value (source `{source}`)", source=source)
    if len(value) < MIN_SECRET_CHARS:
        raise _missing(
            decl.name,
            f"resolves to a value of {len(value)} character{'s' if len(value) > 1 else ''} (source `{source}`): the "
            f"engine masks secrets by value and refuses one shorter than {MIN_SECRET_CHARS} characters, which it "
            "could not mask without masking unrelated text; use a longer value",
            source=source,
        )
    return value


def _read_file(name: str, raw: str, workdir: Path) -> str:
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = workdir / path
    from checker.core.reader import FileReadError, read_file

    try:  # a pipe too (`/dev/fd/N`, how secret injectors hand a value over), never a device
        data = read_file(str(path), MAX_FILE_BYTES, truncate=True, pipes=True, deadline_s=SECRET_READ_DEADLINE_S)
    except FileReadError as e:
        raise _missing(name, f"reads the file `{raw}`, which cannot be read ({e.reason})", source="file") from None
    except OSError as e:
        raise _missing(
            name, f"reads the file `{raw}`, which cannot be read ({type(e).__name__})", source="file"
        ) from None
    if len(data) > MAX_FILE_BYTES:
        raise _missing(name, f"reads the file `{raw}`, which is over 1 MiB (a secret is a value, not a blob)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _missing(name, f"reads the file `{raw}`, which is not UTF-8 text", source="file") from None
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text


def _from_vault(name: str, key: str, env: Mapping[str, str]) -> str:
    from runtime.guard.vault import VaultError, open_vault

    try:
        value = open_vault(env).get(key)
    except VaultError as e:
        raise _missing(name, f"reads `{key}` from the nika-vault: {e}", source="vault") from None
    if value is None:
        raise _missing(
            name, f"reads `{key}` from the nika-vault, which has no such key (add it: nika secrets set {key})"
        )
    return value
