"""Where provider assets land: the normative file names, collision probing, and the manifest.

Names are ``{stem}-{provider}-{modelslug}-{index}-{sha8}.{ext}`` for images and
``{stem}-{provider}-{modelslug}-{sha8}.{ext}`` for speech, every part reduced to ``[a-z0-9._-]``
(no separator, no ``..``), so a name can never leave ``output_dir``. The same bytes under the same
name are an idempotent re-run; different bytes under a taken name probe ``-2`` … ``-99``. Every
final path is judged by ``permits.fs.write`` before it is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runtime.builtins._artifacts import save
from runtime.errors import TaskError

UNSAFE = re.compile(r"[^a-z0-9._-]+")


def slug(text: str, fallback: str = "x") -> str:
    s = UNSAFE.sub("-", text.lower()).strip("-.")
    s = re.sub(r"\.{2,}", ".", s)[:64].strip("-.")
    return s or fallback


def stem(args: dict[str, Any], fallback: str) -> str:
    meta = args.get("metadata") if isinstance(args.get("metadata"), dict) else {}
    raw = args.get("filename_prefix") or meta.get("page_slug") or fallback
    return slug(str(raw), fallback)


def place(
    output_dir: str,
    name: str,
    data: bytes,
    resolve: Callable[[str], Path],
    code: str,
) -> tuple[str, str, bool]:
    """Judge and write ``data`` as ``name`` (probing past a taken name): (shown path, file name, wrote)."""
    base, dot, ext = name.rpartition(".")
    for n in range(1, 100):
        filename = name if n == 1 else f"{base}-{n}{dot}{ext}"
        shown = f"{output_dir.rstrip('/')}/{filename}"
        target = resolve(shown)
        if target.is_file() and target.read_bytes() != data:
            continue
        return shown, filename, save(target, data, code, shown)
    raise TaskError(code, f"every name from {name} to -99 in {output_dir} is taken by other content")


def write_manifest(
    output_dir: str, name: str, manifest: dict[str, Any], resolve: Callable[[str], Path], code: str
) -> str:
    shown = f"{output_dir.rstrip('/')}/{name}"
    body = (json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8")
    save(resolve(shown), body, code, shown)
    return shown
