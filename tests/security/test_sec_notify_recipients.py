"""Who `nika:notify` may mail (builtins §nika:notify; spec 10 §the permit-parameterization taint).

Spec 10 names no permit category for mail recipients, so the judge (runtime/net/mail.py
`judge_recipients`) admits a recipient that is visible at review distance (the `target:` is
trusted: a literal, a `const.*`; the checker's own integrity judge decides, on the task the run
executes) or granted by the engine configuration (`NIKA_SMTP_RECIPIENTS`). Before, any workflow with
an unrelated grant could mail whatever an input or a model chose. Also: at most ten recipients, and
a typed NOTIFY error (never an engine error, never a header) for every control, format or
separator character. Runs go through `nika run` against an SMTP server on loopback.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rt_helpers import run_yaml

aiosmtpd = pytest.importorskip("aiosmtpd.controller", reason="aiosmtpd (test extra) is not installed")


class _Inbox:
    def __init__(self) -> None:
        self.rcpts: list[str] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.rcpts += list(envelope.rcpt_tos)
        return "250 Message accepted"


@pytest.fixture(scope="module")
def relay() -> Iterator[tuple[int, _Inbox]]:
    inbox = _Inbox()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctl = aiosmtpd.Controller(inbox, hostname="127.0.0.1", port=port)
    ctl.start()
    yield port, inbox
    ctl.stop()


def _env(port: int, **more: str) -> dict[str, str]:
    smtp = {"NIKA_SMTP_HOST": "127.0.0.1", "NIKA_SMTP_PORT": str(port), "NIKA_SMTP_FROM": "runs@build.example"}
    return {**smtp, "NIKA_SMTP_STARTTLS": "0", "NIKA_SMTP_TIMEOUT_S": "5", **more}


_WF = """\
nika: v1
workflow: {{ id: mail }}
inputs:
  to: {{ type: string, default: "pager@build.example" }}
const:
  desk: "desk@build.example"
permits: {{ net: {{ http: ["status.build.example"] }}, tools: ["nika:notify"] }}
tasks:
  tell:
    invoke:
      tool: "nika:notify"
      args: {{ channel: email, target: {target}, message: "nightly done" }}
"""


def _mail(tmp_path: Path, port: int, target: str, inputs: dict[str, Any] | None = None, **env: str):
    result = run_yaml(_WF.format(target=target), tmp_path, inputs, engine_env=_env(port, **env))
    return result.tasks["tell"]


@pytest.mark.parametrize("target", ['"ops@build.example"', '"${{ const.desk }}"'])
def test_a_recipient_written_in_the_file_is_mailed(tmp_path: Path, relay: tuple[int, _Inbox], target: str) -> None:
    port, inbox = relay
    rec = _mail(tmp_path, port, target)
    assert rec.status == "success", rec.error
    assert inbox.rcpts[-1] in ("ops@build.example", "desk@build.example")


def test_a_computed_recipient_needs_a_grant(tmp_path: Path, relay: tuple[int, _Inbox]) -> None:
    port, inbox = relay
    before = len(inbox.rcpts)
    rec = _mail(tmp_path, port, '"${{ inputs.to }}"', {"to": "someone@far.example"})
    assert rec.status == "failure" and rec.error["code"] == "NIKA-SEC-004"
    assert rec.error["details"]["plane"] == "mail" and "NIKA_SMTP_RECIPIENTS" in rec.error["message"]
    assert len(inbox.rcpts) == before
    rec = _mail(tmp_path, port, '"${{ inputs.to }}"', {"to": "lead@far.example"}, NIKA_SMTP_RECIPIENTS="@far.example")
    assert rec.status == "success" and inbox.rcpts[-1] == "lead@far.example"


@pytest.mark.parametrize("bad", ["\\u2029", "\\f", "\\x7f", "\\u200e", "\\0"])
def test_every_bad_header_character_is_a_typed_notify_error(
    tmp_path: Path, relay: tuple[int, _Inbox], bad: str
) -> None:
    port, inbox = relay
    before = len(inbox.rcpts)
    rec = _mail(tmp_path, port, f'"ops@build.example{bad}"')
    assert rec.status == "failure" and rec.error["code"] == "NIKA-BUILTIN-NOTIFY-001", rec.error
    assert "U+" in rec.error["message"] and len(inbox.rcpts) == before


def test_the_recipient_count_is_bounded(tmp_path: Path, relay: tuple[int, _Inbox]) -> None:
    port, _inbox = relay
    many = ", ".join(f"r{i}@build.example" for i in range(11))
    rec = _mail(tmp_path, port, f'"{many}"')
    assert rec.status == "failure" and rec.error["code"] == "NIKA-BUILTIN-NOTIFY-001"
    assert "at most 10" in rec.error["message"]
