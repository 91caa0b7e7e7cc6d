"""nika:notify beyond the webhook: email over SMTP to a real aiosmtpd server on loopback, the
engine-configured default targets of slack/discord (stdlib builtins §nika:notify)."""

from __future__ import annotations

import email
import socket
import threading
from collections.abc import Iterator
from email.policy import default as default_policy
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller  # the test extra installs it: missing, this module fails to load

from runtime import builtins
from runtime.errors import TaskError
from tests.runtime.builtins_harness import make_ctx


class _Inbox:
    def __init__(self) -> None:
        self.mail: list[tuple[str, list[str], bytes]] = []

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, options: Any) -> str:
        if address.startswith("nobody@"):
            return "550 no such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.mail.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
        return "250 Message accepted"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def smtp() -> Iterator[tuple[int, _Inbox]]:
    inbox = _Inbox()
    port = _free_port()
    ctl = Controller(inbox, hostname="127.0.0.1", port=port)
    ctl.start()
    yield port, inbox
    ctl.stop()


@pytest.fixture(scope="module")
def silent_port() -> Iterator[int]:
    """A server that accepts connections and never says a word (an SMTP relay that hangs)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join(1)
    for c in held:
        c.close()
    srv.close()


def _env(port: int, **more: str) -> dict[str, str]:
    return {
        "NIKA_SMTP_HOST": "127.0.0.1",
        "NIKA_SMTP_PORT": str(port),
        "NIKA_SMTP_FROM": "nika@ops.example",
        "NIKA_SMTP_STARTTLS": "0",
        "NIKA_SMTP_TIMEOUT_S": "2",
        # these calls carry no task (no `target:` written in a workflow): the recipients are granted
        "NIKA_SMTP_RECIPIENTS": "@ops.example",
        **more,
    }


async def _notify(tmp_path: Path, args: dict[str, Any], env: dict[str, str]) -> Any:
    ctx, _ = make_ctx(tmp_path, env=env)
    return await builtins.call("nika:notify", args, ctx)


async def test_email_delivered_over_smtp(smtp: tuple[int, _Inbox], tmp_path: Path) -> None:
    port, inbox = smtp
    args = {
        "channel": "email",
        "target": "oncall@ops.example",
        "message": "Nightly report failed\nsee the run log",
        "severity": "error",
        "data": {"run": 7},
    }
    assert await _notify(tmp_path, args, _env(port)) is None
    sender, rcpts, raw = inbox.mail[-1]
    msg = email.message_from_bytes(raw, policy=default_policy)
    assert sender == "nika@ops.example" and rcpts == ["oncall@ops.example"]
    assert msg["Subject"] == "[error] Nightly report failed"
    body = msg.get_content()
    assert "see the run log" in body and '"run": 7' in body


@pytest.mark.parametrize("target", ["a@ops.example\r\nBcc: victim@else.example", "x@ops.example\nSubject: hi"])
async def test_email_refuses_header_injection(smtp: tuple[int, _Inbox], tmp_path: Path, target: str) -> None:
    """builtins §notify Injection defense: CR/LF in a header-bound field is refused, nothing sent."""
    port, inbox = smtp
    before = len(inbox.mail)
    with pytest.raises(TaskError) as e:
        await _notify(tmp_path, {"channel": "email", "target": target, "message": "m"}, _env(port))
    assert e.value.code == "NIKA-BUILTIN-NOTIFY-001" and "CR/LF" in e.value.message
    assert len(inbox.mail) == before


async def test_email_subject_never_carries_a_line_break(smtp: tuple[int, _Inbox], tmp_path: Path) -> None:
    port, inbox = smtp
    await _notify(tmp_path, {"channel": "email", "target": "a@ops.example", "message": "\n\nx\r\nBcc: e@v"}, _env(port))
    msg = email.message_from_bytes(inbox.mail[-1][2], policy=default_policy)
    assert msg["Subject"] == "[info] x" and msg["Bcc"] is None


async def test_email_unconfigured_and_refused(smtp: tuple[int, _Inbox], tmp_path: Path) -> None:
    port, _ = smtp
    with pytest.raises(TaskError) as e:
        await _notify(tmp_path, {"channel": "email", "target": "a@ops.example", "message": "m"}, {})
    assert e.value.code == "NIKA-BUILTIN-NOTIFY-001" and "NIKA_SMTP_HOST" in e.value.message
    with pytest.raises(TaskError) as e:
        await _notify(tmp_path, {"channel": "email", "target": "nobody@ops.example", "message": "m"}, _env(port))
    assert e.value.code == "NIKA-BUILTIN-NOTIFY-002" and e.value.transient is False


async def test_email_relay_that_hangs_times_out(silent_port: int, tmp_path: Path) -> None:
    """A relay that never answers ends as a transient NOTIFY-002 within the configured timeout."""
    env = _env(silent_port, NIKA_SMTP_TIMEOUT_S="0.3")
    with pytest.raises(TaskError) as e:
        await _notify(tmp_path, {"channel": "email", "target": "a@ops.example", "message": "m"}, env)
    assert e.value.code == "NIKA-BUILTIN-NOTIFY-002" and e.value.transient is True


async def test_sms_is_unconfigured(tmp_path: Path) -> None:
    with pytest.raises(TaskError) as e:
        await _notify(tmp_path, {"channel": "sms", "target": "+15550100", "message": "m"}, {})
    assert e.value.code == "NIKA-BUILTIN-NOTIFY-001" and e.value.category == "validation_error"


async def test_slack_default_target_from_engine_configuration(tmp_path: Path) -> None:
    """A slack/discord task without `target:` uses the engine's configured URL (judged like any other)."""
    judged: list[str] = []

    def judge(url: str) -> None:
        judged.append(url)
        raise TaskError("NIKA-SEC-004", "not granted")

    ctx, _ = make_ctx(tmp_path, env={"NIKA_NOTIFY_SLACK_URL": "https://hooks.slack.example/T1"}, judge_url=judge)
    with pytest.raises(TaskError) as e:
        await builtins.call("nika:notify", {"channel": "slack", "message": "m"}, ctx)
    assert e.value.code == "NIKA-SEC-004" and judged == ["https://hooks.slack.example/T1"]
    ctx, _ = make_ctx(tmp_path, env={})
    with pytest.raises(TaskError) as e:
        await builtins.call("nika:notify", {"channel": "discord", "message": "m"}, ctx)
    assert e.value.code == "NIKA-BUILTIN-NOTIFY-001" and "NIKA_NOTIFY_DISCORD_URL" in e.value.message
