"""`nika secrets set/get/list/rm` on a file vault, and `list --workflow` saying whether each
declared secret resolves without ever printing a value."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from nika.cli import main

VALUE = "s3cr3t-value-for-the-vault"


def test_set_get_list_rm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NIKA_VAULT_FILE", str(tmp_path / "vault.json"))
    monkeypatch.setattr("sys.stdin", io.StringIO(VALUE + "\n"))
    assert main(["secrets", "set", "prod/api"]) == 0
    assert VALUE not in capsys.readouterr().err
    assert main(["secrets", "list"]) == 0 and capsys.readouterr().out == "prod/api\n"
    assert main(["secrets", "get", "prod/api"]) == 0 and capsys.readouterr().out == VALUE
    assert main(["secrets", "rm", "prod/api"]) == 0
    assert main(["secrets", "get", "prod/api"]) == 1 and "no key" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["secrets", "set", "empty"]) == 1


def test_list_workflow_says_what_resolves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NIKA_VAULT_FILE", str(tmp_path / "vault.json"))
    monkeypatch.setenv("NIKA_T_TOKEN", VALUE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(VALUE))
    main(["secrets", "set", "prod/api"])
    (tmp_path / "wf.nika.yaml").write_text(
        "nika: v1\nworkflow: { id: s }\nsecrets:\n"
        "  api: { source: vault, key: prod/api }\n  tok: { source: env, key: NIKA_T_TOKEN }\n"
        "  pem: { source: file, path: gone.pem }\n"
        'tasks:\n  t:\n    invoke: { tool: "nika:log", args: { message: hi } }\n'
    )
    capsys.readouterr()
    assert main(["secrets", "list", "--workflow", "wf.nika.yaml"]) == 1
    out = capsys.readouterr().out
    assert VALUE not in out
    rows = {line.split("\t")[0]: line.split("\t")[3] for line in out.splitlines()}
    assert rows["api"] == "resolves" and rows["tok"] == "resolves" and rows["pem"].startswith("MISSING")
