"""``nika:notify`` ``channel: email`` over SMTP (``smtplib``), to the relay the engine names.

Engine configuration (the engine's environment, never the workflow):
``NIKA_SMTP_HOST`` (required for the channel), ``NIKA_SMTP_PORT`` (default 587; 465 means TLS from
the first byte), ``NIKA_SMTP_FROM`` (required), ``NIKA_SMTP_USER``/``NIKA_SMTP_PASSWORD`` (login when
both are set), ``NIKA_SMTP_STARTTLS`` (``0`` to send in clear on a local relay; default on, except on
465) and ``NIKA_SMTP_TIMEOUT_S`` (default 30: a relay that hangs ends as a transient NOTIFY-002).

Injection defense (builtins §notify): a CR or LF in a header-bound field (the recipient, the sender)
is refused; the subject is built from the message's first line, so it never carries one.
"""

from __future__ import annotations

import asyncio
import json
import smtplib
import ssl
from collections.abc import Mapping
from email.message import EmailMessage
from email.utils import parseaddr
from typing import Any

from runtime.errors import TaskError

NOTIFY_UNCONFIGURED = "NIKA-BUILTIN-NOTIFY-001"
NOTIFY_FAILED = "NIKA-BUILTIN-NOTIFY-002"
SUBJECT_MAX = 78


def _refuse(why: str) -> TaskError:
    return TaskError(NOTIFY_UNCONFIGURED, why, details={"channel": "email"})


def _address(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _refuse(f"`channel: email` needs {what} (an email address)")
    if "\r" in value or "\n" in value:
        raise _refuse(f"{what} contains a line break; header fields refuse CR/LF (RFC 5322 header injection)")
    _, addr = parseaddr(value)
    if "@" not in addr:
        raise _refuse(f"{what} `{value}` is not an email address")
    return value.strip()


def build_message(sender: str, target: Any, message: str, severity: str, data: Any, has_data: bool) -> EmailMessage:
    first = next((ln.strip() for ln in message.splitlines() if ln.strip()), "")
    subject = f"[{severity}] {first}" if first else f"[{severity}] notification"
    if len(subject) > SUBJECT_MAX:
        subject = subject[: SUBJECT_MAX - 1] + "…"
    msg = EmailMessage()
    msg["From"] = _address(sender, "NIKA_SMTP_FROM")
    msg["To"] = _address(target, "`target:`")
    msg["Subject"] = subject
    body = message
    if has_data:
        body += "\n\n" + json.dumps(data, ensure_ascii=False, indent=2)
    msg.set_content(body)
    return msg


def _deliver(env: Mapping[str, str], msg: EmailMessage) -> None:
    host = env["NIKA_SMTP_HOST"]
    port = int(env.get("NIKA_SMTP_PORT") or 587)
    timeout = float(env.get("NIKA_SMTP_TIMEOUT_S") or 30)
    context = ssl.create_default_context()
    if port == 465:
        client: smtplib.SMTP = smtplib.SMTP_SSL(host, port, timeout=timeout, context=context)
    else:
        client = smtplib.SMTP(host, port, timeout=timeout)
    with client:
        if port != 465 and env.get("NIKA_SMTP_STARTTLS", "1") != "0":
            client.starttls(context=context)
        user, password = env.get("NIKA_SMTP_USER"), env.get("NIKA_SMTP_PASSWORD")
        if user and password:
            client.login(user, password)
        client.send_message(msg)


async def send_email(env: Mapping[str, str], target: Any, message: str, severity: str, data: Any, has: bool) -> None:
    if not env.get("NIKA_SMTP_HOST"):
        raise _refuse("the `email` channel is not configured on this engine: set NIKA_SMTP_HOST and NIKA_SMTP_FROM")
    msg = build_message(env.get("NIKA_SMTP_FROM", ""), target, message, severity, data, has)
    try:
        await asyncio.to_thread(_deliver, env, msg)
    except smtplib.SMTPRecipientsRefused:
        raise TaskError(NOTIFY_FAILED, "the SMTP relay refused the recipient", details={"channel": "email"}) from None
    except smtplib.SMTPResponseException as e:
        raise TaskError(
            NOTIFY_FAILED,
            f"the SMTP relay refused the message ({e.smtp_code})",
            transient=400 <= e.smtp_code < 500,
            details={"channel": "email", "smtp_code": e.smtp_code},
        ) from None
    except (smtplib.SMTPException, OSError, ValueError) as e:
        raise TaskError(
            NOTIFY_FAILED,
            f"delivery to the SMTP relay `{env['NIKA_SMTP_HOST']}` failed: {type(e).__name__}",
            transient=True,
            details={"channel": "email"},
        ) from None
