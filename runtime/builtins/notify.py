"""``nika:notify`` (stdlib builtins §nika:notify): one builtin, five channels.

``webhook`` posts ``{message, severity, data?}``; ``slack`` and ``discord`` post their webhook
formats with the message neutralised as text (no mentions, no markup). All three ride the fetch
client (:mod:`runtime.net.client`): the one URL parser, the SSRF floor (lifted by the same
``NIKA_FETCH_ALLOW_PRIVATE``), the target judged against ``permits.net.http`` and every hop by the
egress judge (a secret in the message or the target goes only where its ``egress:`` sanctions
``nika:notify``), under the network deadline. ``email`` goes over SMTP to the relay the
engine configuration names (:mod:`runtime.net.mail`). ``sms`` has no carrier gateway in this
build: NOTIFY-001, like any channel the engine has not configured.

Engine configuration (never the workflow): ``NIKA_NOTIFY_SLACK_URL`` / ``NIKA_NOTIFY_DISCORD_URL``
are the default targets of those channels when a task gives none; the SMTP settings are listed in
:mod:`runtime.net.mail`.
"""

from __future__ import annotations

import json
from typing import Any

from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._support import arg
from runtime.errors import TaskError
from runtime.net import url as urls
from runtime.net.client import CODE as FETCH_FAILED
from runtime.net.client import request

NOTIFY = "nika:notify"
NOTIFY_UNCONFIGURED = "NIKA-BUILTIN-NOTIFY-001"
NOTIFY_FAILED = "NIKA-BUILTIN-NOTIFY-002"
_DISCORD_MARKUP = str.maketrans({c: "\\" + c for c in "\\*_~`|>#-[]()"})
_DEFAULT_TARGET = {"slack": "NIKA_NOTIFY_SLACK_URL", "discord": "NIKA_NOTIFY_DISCORD_URL"}


def _slack_text(message: str) -> str:
    """Slack's control characters escaped, so `<!channel>`/`<@U1>` arrive as text (builtins §notify)."""
    return message.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _payload(channel: str, message: str, severity: str, data: Any, has_data: bool) -> dict[str, Any]:
    if channel == "slack":
        return {"text": _slack_text(message), "mrkdwn": False}
    if channel == "discord":
        return {"content": message.translate(_DISCORD_MARKUP), "allowed_mentions": {"parse": []}}
    body: dict[str, Any] = {"message": message, "severity": severity}
    if has_data:
        body["data"] = data
    return body


def unconfigured(channel: str, why: str) -> TaskError:
    return TaskError(NOTIFY_UNCONFIGURED, why, details={"channel": channel})


@builtin(NOTIFY)
async def notify(args: dict[str, Any], ctx: BuiltinContext) -> Any:
    channel = str(args.get("channel") or "webhook")
    raw = args.get("message")
    message = raw if isinstance(raw, str) else ("" if raw is None else json.dumps(raw, ensure_ascii=False))
    severity = str(arg(args, NOTIFY, "severity") or "info")
    env = ctx.extra.get("env") or {}
    if channel == "sms":
        raise unconfigured(channel, "the `sms` channel has no carrier gateway in this build of nika; use webhook")
    if channel == "email":
        from runtime.net.mail import send_email

        trusted = "target" in (ctx.extra.get("trusted") or ())  # written in the file (spec 10 integrity)
        await send_email(env, args.get("target"), message, severity, args.get("data"), "data" in args, trusted)
        return None
    target = args.get("target") or env.get(_DEFAULT_TARGET.get(channel, ""), "")
    if not isinstance(target, str) or not target:
        hint = f" (or set {_DEFAULT_TARGET[channel]} in the engine configuration)" if channel in _DEFAULT_TARGET else ""
        raise unconfigured(channel, f"`channel: {channel}` needs a `target:` URL{hint}")
    judge_url = ctx.extra.get("judge_url")
    if judge_url is not None:
        # before anything else, as for a fetch URL: permits.net.http judges the target with the one
        # URL reading (checker.contracts.effects.url_host), so a port that is no port is NIKA-SEC-004
        # at run as at check, never this channel's own refusal
        judge_url(target)
    try:
        urls.parse(target)  # the one URL parser: a malformed target is this channel's own refusal
    except TaskError as e:
        if e.code != FETCH_FAILED:
            raise  # not http(s): NIKA-SEC-004, as a fetch URL
        raise unconfigured(channel, f"`target:` {e.message}") from None
    content = json.dumps(_payload(channel, message, severity, args.get("data"), "data" in args), ensure_ascii=False)
    try:
        resp = await request(ctx.extra, "POST", target, {"content-type": "application/json"}, {"content": content})
    except TaskError as e:
        if e.code != FETCH_FAILED:
            raise  # the SSRF floor and the permits stay NIKA-SEC-004
        raise TaskError(NOTIFY_FAILED, e.message, transient=e.transient, details={"channel": channel}) from None
    if not 200 <= resp.status < 300:
        raise TaskError(
            NOTIFY_FAILED,
            f"the {channel} endpoint answered HTTP {resp.status}",
            transient=resp.status >= 500 or resp.status in (408, 429),
            details={"channel": channel, "status_code": resp.status},
        )
    return None
