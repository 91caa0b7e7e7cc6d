"""``nika:notify`` ``channel: email`` over SMTP (``smtplib``), to the relay the engine names.

Engine configuration (the engine's environment, never the workflow):
``NIKA_SMTP_HOST`` (required for the channel), ``NIKA_SMTP_PORT`` (default 587; 465 means TLS from
the first byte), ``NIKA_SMTP_FROM`` (required), ``NIKA_SMTP_USER``/``NIKA_SMTP_PASSWORD`` (login when
both are set), ``NIKA_SMTP_STARTTLS`` (``0`` to send in clear on a local relay; default on, except on
465), ``NIKA_SMTP_TIMEOUT_S`` (default 30: each exchange with a relay that hangs) and
``NIKA_SMTP_RECIPIENTS`` (the recipients a computed ``target:`` may name: addresses and ``@domain``
entries, comma-separated). The whole delivery is bounded by the network deadline
(:func:`runtime.net.client.deadline_s`).

Who may be mailed (:func:`judge_recipients`, the one judge of this plane): spec 10 names no permit
category for mail recipients, so a recipient is either **visible at review distance** (the
``target:`` is trusted in the sense of spec 10 §the permit-parameterization taint: a literal, a
``const.*`` or a ``secrets.*``, judged by the checker's :func:`~checker.rules.support.flow.integrity`
on the task the run is executing) or **granted** by the engine configuration
(``NIKA_SMTP_RECIPIENTS``). A target computed from inputs, config, a task result or a model's tool
call names only granted recipients. At most :data:`MAX_RECIPIENTS` recipients per message.

Injection defense (builtins §notify): a header-bound field (the recipients, the sender) holding a
control, format or line/paragraph-separator character (CR, LF, NUL, U+000B, U+2028, …) is refused
(NIKA-BUILTIN-NOTIFY-001, naming the code point); the subject is built by the engine from the
message's first line with every such character replaced by a space.
"""

from __future__ import annotations

import asyncio
import json
import re
import smtplib
import ssl
import unicodedata
from collections.abc import Mapping
from email.message import EmailMessage
from typing import Any

from runtime.errors import TaskError

NOTIFY_UNCONFIGURED = "NIKA-BUILTIN-NOTIFY-001"
NOTIFY_FAILED = "NIKA-BUILTIN-NOTIFY-002"
SEC = "NIKA-SEC-004"
SUBJECT_MAX = 78
MAX_RECIPIENTS = 10
RECIPIENTS_ENV = "NIKA_SMTP_RECIPIENTS"
_BAD = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def _refuse(why: str, **details: Any) -> TaskError:
    return TaskError(NOTIFY_UNCONFIGURED, why, details={"channel": "email", **details})


def bad_header_char(value: str) -> str | None:
    """The first character of ``value`` no header field may carry (``U+XXXX``), or ``None``."""
    for ch in value:
        if unicodedata.category(ch) in _BAD:
            return f"U+{ord(ch):04X}"
    return None


_LOCAL = r'[^\s@<>,;:"()\[\]\\]+'
_LABEL = r'[^\s@<>,;:"()\[\]\\.]+'
_ADDR = rf"{_LOCAL}@{_LABEL}(?:\.{_LABEL})+"
_MAILBOX = re.compile(rf'\s*(?:(?P<name>[^<>,@"]*?)\s*<(?P<bracketed>{_ADDR})>|(?P<bare>{_ADDR}))\s*')


def _header_value(value: str, what: str) -> None:
    bad = bad_header_char(value)
    if bad is not None:
        raise _refuse(
            f"{what} contains the character {bad}; header fields refuse CR/LF and every other control, "
            "format or line-separator character (RFC 5322 header injection)",
            character=bad,
        )


def _mailboxes(text: str, what: str) -> list[str]:
    """The addresses of one header-bound string: ``a@x.example``, ``Name <a@x.example>``, or a
    comma-separated list of them (parsed strictly: nothing else is an address here)."""
    _header_value(text, what)
    out = []
    for piece in text.split(","):
        m = _MAILBOX.fullmatch(piece)
        if m is None:
            raise _refuse(f"{what} `{text.strip()}` is not an email address or a comma-separated list of them")
        out.append(m.group("bracketed") or m.group("bare"))
    return out


def _address(value: Any, what: str) -> str:
    """The one mailbox of a header-bound field (the sender), judged."""
    if not isinstance(value, str) or not value.strip():
        raise _refuse(f"`channel: email` needs {what} (an email address)")
    if len(_mailboxes(value, what)) != 1:
        raise _refuse(f"{what} `{value.strip()}` is not one email address")
    return value.strip()


def recipient_list(target: Any) -> list[str]:
    """The recipients ``target:`` names: one address, a comma-separated list, or a list of them."""
    items = target if isinstance(target, list) else [target]
    out: list[str] = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise _refuse("`channel: email` needs `target:` (an email address, or a list of them)")
        out += _mailboxes(item, "`target:`")
    return out


def _granted(addr: str, grants: list[str]) -> bool:
    local, _, domain = addr.rpartition("@")
    mine = f"{local}@{domain.lower()}"
    for g in grants:
        if g.startswith("@") and domain.lower() == g[1:].lower():
            return True
        if "@" in g[1:] and mine == f"{g.rpartition('@')[0]}@{g.rpartition('@')[2].lower()}":
            return True
    return False


def judge_recipients(target: Any, *, trusted: bool, grants: str | None) -> tuple[str, ...]:
    """The recipients of one email, judged: well formed, at most :data:`MAX_RECIPIENTS`, and each
    visible at review distance (``trusted``) or granted by ``NIKA_SMTP_RECIPIENTS`` (``grants``)."""
    found = recipient_list(target)
    if len(found) > MAX_RECIPIENTS:
        raise _refuse(f"`target:` names {len(found)} recipients; at most {MAX_RECIPIENTS} per message")
    if trusted:
        return tuple(found)
    allowed = [g.strip() for g in (grants or "").split(",") if g.strip()]
    for addr in found:
        if not _granted(addr, allowed):
            raise TaskError(
                SEC,
                f"the recipient `{addr}` is computed at run time (not written in the workflow) and the engine "
                f"configuration does not grant it: write the address in `target:`, or list it (or `@domain`) in "
                f"{RECIPIENTS_ENV}",
                details={"plane": "mail", "gate": addr, "channel": "email"},
            )
    return tuple(found)


def _subject(severity: str, message: str) -> str:
    first = next((ln.strip() for ln in message.splitlines() if ln.strip()), "")
    first = "".join(" " if unicodedata.category(c) in _BAD else c for c in first).strip()
    subject = f"[{severity}] {first}" if first else f"[{severity}] notification"
    subject = "".join(" " if unicodedata.category(c) in _BAD else c for c in subject)
    return subject[: SUBJECT_MAX - 1] + "…" if len(subject) > SUBJECT_MAX else subject


def build_message(
    sender: str, recipients: tuple[str, ...], message: str, severity: str, data: Any, has_data: bool
) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = _address(sender, "NIKA_SMTP_FROM")
    msg["To"] = ", ".join(recipients)
    msg["Subject"] = _subject(severity, message)
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


async def send_email(
    env: Mapping[str, str], target: Any, message: str, severity: str, data: Any, has: bool, trusted: bool = False
) -> None:
    """One email, judged (:func:`judge_recipients`), then delivered under the network deadline."""
    from runtime.net.client import DEADLINE_ENV, deadline_s

    if not env.get("NIKA_SMTP_HOST"):
        raise _refuse("the `email` channel is not configured on this engine: set NIKA_SMTP_HOST and NIKA_SMTP_FROM")
    recipients = judge_recipients(target, trusted=trusted, grants=env.get(RECIPIENTS_ENV))
    msg = build_message(env.get("NIKA_SMTP_FROM", ""), recipients, message, severity, data, has)
    limit = deadline_s(env)
    try:
        await asyncio.wait_for(asyncio.to_thread(_deliver, env, msg), limit)
    except TimeoutError:
        raise TaskError(
            NOTIFY_FAILED,
            f"the SMTP relay `{env['NIKA_SMTP_HOST']}` did not take the message within the engine's network "
            f"deadline of {limit:g} s ({DEADLINE_ENV})",
            transient=True,
            details={"channel": "email", "deadline_s": limit},
        ) from None
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
