"""What the three wire formats share, hand-written on one ``httpx.AsyncClient`` (the formats: OpenAI Chat
Completions in :mod:`.wire_openai`, Anthropic Messages in :mod:`.wire_anthropic`, Gemini in :mod:`.wire_gemini`).

Errors are classified once, in :func:`_post`: 401/403 name the key variable to set or fix (never
the key, never a JSON dump); 429, 5xx, connection failures and malformed bodies are transient
(NIKA-PROVIDER-001, ``retry:`` may retry them, ``Retry-After`` rides in ``details``); other 4xx
are the provider refusing the call (NIKA-INFER-001). A reply is read under one overall deadline
and a size cap, so a server that trickles bytes or sends megabytes cannot hang the run.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from runtime.errors import TaskError
from runtime.guard import limits
from runtime.providers.base import Provider, Request, Response, ToolCall

TRANSIENT = "NIKA-PROVIDER-001"
REFUSED = "NIKA-INFER-001"
SCHEMA_CODE = "NIKA-INFER-002"
TIMEOUT_CODE = "NIKA-TIMEOUT-001"


@dataclass(frozen=True)
class Endpoint:
    """Where and how to reach one provider (``key`` is never logged or shown)."""

    provider: str
    url: str
    key: str | None
    key_vars: tuple[str, ...]
    local: bool
    thinking: str | None = None  # how this provider takes `infer.thinking:` (registry.THINKING), if at all


# What reading a reply document of the wrong shape raises (a member of the wrong type: an index
# that is not a number, a message that is not an object): the provider's malformed reply, streamed
# or whole, never an engine error.
SHAPE_ERRORS = (TypeError, ValueError, AttributeError, KeyError, IndexError)


class Fold(Protocol):
    """What a wire's stream reader does: take each SSE event, say when the reply is complete (the
    provider's end marker arrived), and hand back the reply document it rebuilt."""

    done: bool

    def event(self, name: str, data: str) -> None: ...

    def whole_at_end(self) -> bool:
        """Whether a stream that ends cleanly (no transport error) without the end marker still
        holds the whole reply."""
        ...

    def document(self) -> Any: ...


class WireProvider(Provider):
    """Shared plumbing: the POST, the deadline, the error classification."""

    def __init__(self, endpoint: Endpoint, services: Any) -> None:
        self.endpoint = endpoint
        self.id = endpoint.provider
        self.services = services

    def _timeout(self, request: Request) -> float:
        if request.timeout_s is not None:
            return max(0.001, min(request.timeout_s, limits.SILENT_CONNECTION_CEILING_S))
        configured = self._configured_deadline()
        if configured is not None:
            return configured
        return limits.LOCAL_CALL_TIMEOUT_S if self.endpoint.local else limits.CLOUD_CALL_TIMEOUT_S

    def _configured_deadline(self) -> float | None:
        """``NIKA_PROVIDER_DEADLINE_S``: the engine's total deadline for a provider call without a
        ``timeout:``, streamed or not (unset: the provider class default above, and a stream has only
        its idle guard, stdlib/providers-v0.1.md §Transport deadline)."""
        raw = (getattr(self.services, "env", None) or {}).get(limits.PROVIDER_DEADLINE_VAR, "").strip()
        if not raw:
            return None
        try:
            value = float(raw)
        except ValueError:
            value = 0.0
        if not value > 0:
            raise TaskError(
                REFUSED,
                f"{limits.PROVIDER_DEADLINE_VAR} must be a positive number of seconds, not {raw!r}",
                details={"provider": self.id},
            )
        return value

    def _judge(self, url: str, headers: dict[str, str], body: dict[str, Any]) -> None:
        """The egress judge (:mod:`runtime.net.egress`) on the request about to leave: a declared
        secret in the prompt goes to a provider only where its ``egress:`` sanctions ``infer`` or
        ``agent`` (the sink of this call). The engine's own key goes to the endpoint the engine
        configuration names, which is not the workflow's to judge. Nothing follows a redirect here."""
        from runtime.net import egress

        egress.judge_request(url, headers, json.dumps(body, ensure_ascii=False), "infer")

    def _key_help(self) -> str:
        names = [f"NIKA_{self.id.upper()}_API_KEY", *self.endpoint.key_vars]
        return " or ".join(f"`{n}`" for n in dict.fromkeys(names))

    def _need_key(self) -> None:
        if self.endpoint.key is None and not self.endpoint.local:
            raise TaskError(
                REFUSED,
                f"`{self.id}` needs an API key and none is set: export {self._key_help()} in the engine's environment",
                details={"provider": self.id, "status": None},
            )

    async def _post(self, url: str, headers: dict[str, str], body: dict[str, Any], request: Request) -> Any:
        import httpx

        client = self.services.http()
        timeout = self._timeout(request)
        host = httpx.URL(url).host or url
        self._judge(url, headers, body)
        started = time.monotonic()
        try:
            async with asyncio.timeout(timeout):
                async with client.stream(
                    "POST",
                    url,
                    json=body,
                    headers=headers,
                    timeout=httpx.Timeout(timeout, connect=min(timeout, limits.CONNECT_TIMEOUT_S)),
                ) as resp:
                    data = await self._read_capped(resp)
                    status = resp.status_code
                    retry_after = resp.headers.get("retry-after")
        except (TimeoutError, httpx.TimeoutException):
            took = time.monotonic() - started
            if request.timeout_s is not None:
                raise TaskError(
                    TIMEOUT_CODE,
                    f"`{self.id}` did not answer within the task's remaining time ({took:.1f}s)",
                    details={"provider": self.id},
                ) from None
            raise TaskError(
                TRANSIENT,
                f"`{self.id}` did not answer within {timeout:g}s",
                True,
                {"provider": self.id, "deadline_s": timeout},
            ) from None
        except httpx.TransportError as exc:
            raise self._unreachable(host, exc) from None
        return self._classify(status, data, retry_after)

    def _idle_s(self) -> float:
        """How long a stream may deliver nothing before it is reaped as stalled."""
        return limits.LOCAL_CALL_TIMEOUT_S if self.endpoint.local else limits.STREAM_IDLE_TIMEOUT_S

    async def _post_stream(
        self, url: str, headers: dict[str, str], body: dict[str, Any], request: Request, fold: Fold
    ) -> Any:
        """POST asking for an SSE reply and fold its events into the reply document a
        non-streamed call would have received (``fold.document()``). The declared ``timeout:``
        bounds the whole stream; without one only the idle guard runs (a stream that delivers
        nothing for :meth:`_idle_s` is stalled), so a long healthy generation is not cut. An
        error status, or a server that answers whole instead of streaming, is read as in
        :meth:`_post`. A stream that ends before the provider's end marker is cut: transient."""
        import contextlib

        import httpx

        client = self.services.http()
        idle = self._idle_s()
        host = httpx.URL(url).host or url
        self._judge(url, headers, body)
        started = time.monotonic()
        got = [0]
        total = request.timeout_s if request.timeout_s is not None else self._configured_deadline()
        deadline = asyncio.timeout(total) if total is not None else contextlib.nullcontext()
        try:
            async with (
                deadline,
                client.stream(
                    "POST",
                    url,
                    json=body,
                    headers=headers,
                    timeout=httpx.Timeout(idle, connect=min(idle, limits.CONNECT_TIMEOUT_S)),
                ) as resp,
            ):
                kind = resp.headers.get("content-type", "")
                if resp.status_code >= 300 or "text/event-stream" not in kind:
                    data = await self._read_capped(resp)
                    return self._classify(resp.status_code, data, resp.headers.get("retry-after"))
                await self._fold_events(resp, fold, got)
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise self._stream_timeout(exc, request, time.monotonic() - started, got[0], idle, total) from None
        except httpx.TransportError as exc:
            if got[0]:
                raise self._cut(got[0], type(exc).__name__) from None
            raise self._unreachable(host, exc) from None
        if not (fold.done or fold.whole_at_end()):
            raise self._cut(got[0], "no end marker")
        return fold.document()

    async def _fold_events(self, resp: Any, fold: Fold, got: list[int]) -> None:
        """Fold the stream's events until the provider's end marker (or the stream's end)."""
        from runtime.providers.stream import sse_events

        async for name, data in sse_events(self._lines(resp, got)):
            try:
                fold.event(name, data)
            except SHAPE_ERRORS as exc:
                # a member of the wrong type (an index that is not a number, content that is
                # not an object): the provider's malformed stream, not an engine bug
                raise self.stream_error(f"a stream event of an unexpected shape ({type(exc).__name__})") from None
            if fold.done:
                break

    def _stream_timeout(
        self, exc: Exception, request: Request, took: float, got: int, idle: float, total: float | None
    ) -> TaskError:
        """The task's ``timeout:`` ran out mid-stream (a timeout error), the engine's provider
        deadline did (transient), or the idle guard fired (transient)."""
        if request.timeout_s is not None and isinstance(exc, TimeoutError):
            return TaskError(
                TIMEOUT_CODE,
                f"`{self.id}` did not finish streaming within the task's remaining time ({took:.1f}s, "
                f"{got} bytes received)",
                details={"provider": self.id, "received_bytes": got},
            )
        if total is not None and isinstance(exc, TimeoutError):
            return TaskError(
                TRANSIENT,
                f"`{self.id}` did not finish streaming within the engine's provider deadline of {total:g}s "
                f"({limits.PROVIDER_DEADLINE_VAR}; {got} bytes received)",
                True,
                {"provider": self.id, "deadline_s": total, "received_bytes": got},
            )
        what = (
            f"the stream from `{self.id}` stalled: nothing arrived for {idle:g}s after {got} bytes"
            if got
            else f"`{self.id}` did not start its stream within {idle:g}s"
        )
        return TaskError(TRANSIENT, what, True, {"provider": self.id, "stream": "stalled"})

    def _unreachable(self, host: str, exc: Exception) -> TaskError:
        return TaskError(
            TRANSIENT,
            f"cannot reach `{self.id}` at {host}: {type(exc).__name__}",
            True,
            {"provider": self.id, "host": host},
        )

    def _cut(self, received: int, why: str) -> TaskError:
        return TaskError(
            TRANSIENT,
            f"the stream from `{self.id}` broke off before the reply was complete ({why}, after {received} bytes)",
            True,
            {"provider": self.id, "stream": "cut", "received_bytes": received},
        )

    def stream_chunk(self, data: str, *, error_member: bool = True) -> dict[str, Any] | None:
        """One stream event's JSON object (``None``: another JSON value, passed over). An event
        that is not JSON breaks the stream; with ``error_member``, so does an object whose
        ``error`` member is set (the OpenAI and Gemini shape of a mid-stream failure)."""
        try:
            chunk = json.loads(data)
        except ValueError:
            raise self.stream_error(f"a stream event that is not JSON ({len(data)} bytes)") from None
        if not isinstance(chunk, dict):
            return None
        if error_member and chunk.get("error"):
            err = chunk["error"]
            raise self.stream_error(err.get("message") if isinstance(err, dict) else err)
        return chunk

    def read_reply(self, request: Request, doc: Any) -> Response:
        """The adapter's reading of a whole reply document (:meth:`_reply`). A member of the wrong
        type anywhere in it (a message that is not an object, a tool call that is a string) is the
        provider's malformed reply, a typed failure, never an engine error."""
        try:
            return self._reply(request, doc)
        except TaskError:
            raise
        except SHAPE_ERRORS as exc:
            raise TaskError(
                TRANSIENT,
                f"`{self.id}` sent a reply of an unexpected shape ({type(exc).__name__})",
                True,
                {"provider": self.id},
            ) from None

    def _reply(self, request: Request, doc: Any) -> Response:
        raise NotImplementedError

    def stream_error(self, message: Any, transient: bool = True) -> TaskError:
        """An error the provider reported inside a stream it had already started (HTTP 200)."""
        text = str(message or "no details")[:300]
        if self.endpoint.key:
            text = text.replace(self.endpoint.key, "«redacted»")
        code = TRANSIENT if transient else REFUSED
        return TaskError(code, f"`{self.id}` failed mid-stream: {text}", transient, {"provider": self.id})

    async def _read_capped(self, resp: Any) -> bytes:
        data = bytearray()
        async for chunk in self._decoded(resp):
            data += chunk
        return bytes(data)

    async def _decoded(self, resp: Any) -> AsyncIterator[bytes]:
        """The reply's body through the one bounded decoder (:mod:`runtime.net.decode`), capped."""
        from runtime.net.decode import BodyRefused, decoded

        try:
            async for piece in decoded(resp, limits.MAX_REPLY_BYTES):
                yield piece
        except BodyRefused as e:
            if e.limit is not None:
                raise self._too_big() from None
            why = f"`{self.id}` sent a reply that is refused: {e.why}"
            raise TaskError(REFUSED, why, details={"provider": self.id}) from None

    def _too_big(self) -> TaskError:
        return TaskError(
            REFUSED,
            f"`{self.id}` sent a reply larger than {limits.MAX_REPLY_BYTES // (1024 * 1024)} MiB; it was not read",
            details={"provider": self.id},
        )

    async def _lines(self, resp: Any, got: list[int]) -> AsyncIterator[str]:
        """The stream's lines (LF, CRLF or CR ended), counting the bytes in ``got[0]``, capped.
        Each read is scanned once: a long line arriving in many small reads costs its length,
        not its length times the number of reads."""
        line: list[bytes] = []  # the pieces of the line not yet ended
        held = b""  # a CR that ended a read: maybe half of a CRLF the next read ends
        async for chunk in self._decoded(resp):
            got[0] += len(chunk)
            data = held + chunk
            held = b"\r" if data.endswith(b"\r") else b""
            *done, rest = data[: len(data) - len(held)].replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
            for piece in done:
                line.append(piece)
                yield b"".join(line).decode("utf-8", "replace")
                line = []
            if rest:
                line.append(rest)
        if held:  # the stream's last byte was a CR: it ended a line (no LF can follow now)
            yield b"".join(line).decode("utf-8", "replace")

    def _classify(self, status: int, data: bytes, retry_after: str | None) -> Any:
        details: dict[str, Any] = {"provider": self.id, "status": status}
        if status >= 400:
            refusal = self._read_refusal(status, data)  # what the body says beats what the status suggests
            if refusal is not None:
                raise refusal
        if status in (401, 403):
            what = "rejected the API key" if self.endpoint.key else "requires an API key and none was sent"
            raise TaskError(
                REFUSED,
                f"`{self.id}` {what} (HTTP {status}): check {self._key_help()} in the engine's environment",
                details=details,
            )
        if status == 429 or status >= 500:
            wait = _retry_after_ms(retry_after)
            if wait is not None:
                details["retry_after_ms"] = wait
            why = "is rate-limiting this key" if status == 429 else "failed on its side"
            raise TaskError(TRANSIENT, f"`{self.id}` {why} (HTTP {status})", True, details)
        if status >= 400:
            raise TaskError(
                REFUSED,
                f"`{self.id}` refused the request (HTTP {status}): {self._error_text(data)}",
                details=details,
            )
        try:
            return json.loads(data)
        except ValueError:
            raise TaskError(
                TRANSIENT,
                f"`{self.id}` sent a reply that is not JSON ({len(data)} bytes, likely cut off)",
                True,
                details,
            ) from None

    def _read_refusal(self, status: int, data: bytes) -> TaskError | None:
        """A refusal the provider's error body names (none of them passes by retrying): the account's
        quota or credit exhausted, the caller's country or region not served, a key that is valid
        but not allowed this request. Each says so, with the repair; ``None``: nothing recognised."""
        kind = _refusal_kind(status, data)
        if kind is None:
            return None
        said = self._error_text(data)
        details = {"provider": self.id, "status": status, "reason": kind}
        if kind == "quota":
            why = (
                f"`{self.id}` refused the call: the account's quota or credit is used up (HTTP {status}: {said}). "
                "Retrying will not help: add credit or raise the limit in the provider's billing settings, "
                f"or use another key ({self._key_help()})"
            )
        elif kind == "region":
            why = (
                f"`{self.id}` does not serve requests from this country or region (HTTP {status}: {said}): run "
                "from a region it serves, or use another provider"
            )
        else:
            why = (
                f"`{self.id}` accepted the API key but does not allow it this request (HTTP {status}: {said}): "
                f"grant the key access to this model or project in the provider's console, or set {self._key_help()} "
                "to a key that has it"
            )
        return TaskError(REFUSED, why, False, details)

    def _error_text(self, data: bytes) -> str:
        try:
            doc = json.loads(data)
        except ValueError:
            doc = None
        msg = None
        if isinstance(doc, dict):
            err = doc.get("error")
            msg = err.get("message") if isinstance(err, dict) else err if isinstance(err, str) else doc.get("message")
        text = str(msg) if msg else data[:200].decode("utf-8", "replace")
        key = self.endpoint.key
        if key:
            text = text.replace(key, "«redacted»")
        return text.strip()[:300] or "no details"

    def _shape(
        self,
        request: Request,
        text: str,
        calls: tuple[ToolCall, ...],
        t_in: int,
        t_out: int,
        finish: Any,
        thinking_tokens: int | None = None,
    ) -> Response:
        value: Any = text
        if request.schema is not None and not request.messages:
            value = schema_value(text, self.id, {"provider": self.id})
        return Response(
            value,
            t_in + t_out,
            None,
            t_in,
            t_out,
            calls,
            text,
            None if finish is None else str(finish),
            usage_reported=bool(t_in or t_out),
            thinking_tokens=thinking_tokens,
        )


def schema_value(text: str, who: str, details: dict[str, Any]) -> Any:
    """The JSON value of a reply that ``schema:`` asked for (a Markdown fence unwrapped), or
    NIKA-INFER-002 naming ``who`` when its text is not JSON (the contract is checked later)."""
    try:
        return json.loads(unfence(text))
    except ValueError:
        raise TaskError(
            SCHEMA_CODE,
            f"`{who}` was asked for JSON matching `schema:` and replied with text that is not JSON",
            details=details,
        ) from None


def unfence(text: str) -> str:
    """A JSON reply some models wrap in a Markdown code fence, unwrapped."""
    t = text.strip()
    if t.startswith("```"):
        t = t.split("\n", 1)[1] if "\n" in t else ""
        t = t.rstrip()
        if t.endswith("```"):
            t = t[:-3]
    return t


# What the providers' error bodies say (OpenAI `error.code`/`error.type`, Anthropic `error.type`,
# Gemini `error.status`), by the refusal they mean.
_QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"})
_REGION_CODES = frozenset({"unsupported_country_region_territory", "unsupported_country", "unsupported_region"})
_PERMISSION_CODES = frozenset({"permission_error", "permission_denied", "PERMISSION_DENIED", "forbidden"})
_QUOTA_WORDS = ("credit balance is too low", "exceeded your current quota", "insufficient balance")
_KEY_WORDS = ("api key", "api-key", "apikey", "authentication", "unauthorized")
_REGION_WORDS = ("location is not supported", "country, region, or territory not supported", "region not supported")


def _refusal_kind(status: int, data: bytes) -> str | None:
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    err = doc.get("error") if isinstance(doc, dict) else None
    if not isinstance(err, dict):
        return None
    marks = {str(err.get(k)) for k in ("code", "type", "status") if err.get(k) is not None}
    text = str(err.get("message") or "").lower()
    if marks & _QUOTA_CODES or any(w in text for w in _QUOTA_WORDS):
        return "quota"
    if marks & _REGION_CODES or any(w in text for w in _REGION_WORDS):
        return "region"
    if status == 403 and (marks & _PERMISSION_CODES or not any(w in text for w in _KEY_WORDS)):
        return "permission"
    return None


def _retry_after_ms(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return max(0, int(float(value) * 1000))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0, int((when.timestamp() - time.time()) * 1000))


def _decode_args(raw: Any) -> tuple[dict[str, Any] | None, str]:
    if isinstance(raw, dict):
        return raw, json.dumps(raw)
    if isinstance(raw, str):
        try:
            value = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return None, raw
        return (value if isinstance(value, dict) else None), raw
    return None, json.dumps(raw)


def _schema_instruction(schema: dict[str, Any]) -> str:
    return "Reply with only a JSON value (no prose, no code fence) that matches this JSON Schema:\n" + json.dumps(
        schema, sort_keys=True
    )


# -- OpenAI Chat Completions -----------------------------------------------------------------------
