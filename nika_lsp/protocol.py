"""The JSON-RPC edge: whatever arrives, every request id gets exactly one answer.

pygls turns each message into a typed object inside its JSON decoder's ``object_hook``; when a
request's params do not fit its method, the exception escapes the read loop and the request is
never answered. :class:`NikaProtocol` structures a message itself, once, at the top level, so a
failure can be answered with the request's own id:

* a body that is not JSON: ``-32700`` Parse error, ``id: null`` (reported to
  :meth:`NikaLanguageServer.report_server_error <nika_lsp.server.NikaLanguageServer>`, which
  calls :meth:`NikaProtocol.reply_parse_error`);
* JSON that is not a request, notification or response object: ``-32600`` Invalid Request;
* params that do not fit the method (missing, ``null``, a list, a wrong type, a number outside
  the protocol's integer range): ``-32602`` Invalid params, naming the offending field;
* a request before ``initialize``: ``-32002``; a request after ``shutdown``: ``-32600``.

Notifications that do not fit are logged and dropped: a notification is never answered.
:func:`strict_converter` makes the type check real: cattrs would otherwise turn ``"3"`` or
``true`` into the integer a position needs. Refusals a handler raises on purpose (a
:class:`~pygls.exceptions.JsonRpcException`: a rename to an invalid name, an unknown command) are
answered with their code and logged in one line, without a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
from concurrent.futures import Future
from typing import Any, Optional, Union

import cattrs
from lsprotocol import types as lsp
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage, default_converter
from pygls.protocol.language_server import LanguageServerProtocol, lsp_method

log = logging.getLogger("nika_lsp.protocol")

MsgId = int | str


# -- strict primitives ---------------------------------------------------------------------


# A hook registered for a class also serves its subclasses (IntEnum, str enums): check the JSON
# type, then build the declared class, as cattrs's own hook does.


def _int(value: Any, cl: type) -> Any:
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # JSON has one number type: 3.0 is the integer 3
    if isinstance(value, int) and not isinstance(value, bool):
        return value if cl is int else cl(value)
    raise ValueError(f"expected an integer, got {_json_type(value)}")


def _float(value: Any, cl: type) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) if cl is float else cl(value)
    raise ValueError(f"expected a number, got {_json_type(value)}")


def _str(value: Any, cl: type) -> Any:
    if isinstance(value, str):
        return value if cl is str else cl(value)
    raise ValueError(f"expected a string, got {_json_type(value)}")


def _bool(value: Any, _: type) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError(f"expected a boolean, got {_json_type(value)}")


def _int_or_str(value: Any, _: type) -> int | str:
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise ValueError(f"expected an integer or a string, got {_json_type(value)}")


def _optional_int_or_str(value: Any, _: type) -> int | str | None:
    return None if value is None else _int_or_str(value, _)


def _optional_str_or_bool(value: Any, _: type) -> str | bool | None:
    if value is None or isinstance(value, (str, bool)):
        return value
    raise ValueError(f"expected a string or a boolean, got {_json_type(value)}")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__


def strict_converter() -> cattrs.Converter:
    """pygls's converter, except that primitives must arrive as the JSON type the protocol names."""
    converter = default_converter()
    converter.register_structure_hook(int, _int)
    converter.register_structure_hook(float, _float)
    converter.register_structure_hook(str, _str)
    converter.register_structure_hook(bool, _bool)
    # lsprotocol passes these unions through unchecked (request ids, progress tokens, codes);
    # spelt with typing.Union so they replace lsprotocol's hooks for the very same keys.
    converter.register_structure_hook(Union[int, str], _int_or_str)  # noqa: UP007
    converter.register_structure_hook(Optional[Union[int, str]], _optional_int_or_str)  # noqa: UP007, UP045
    converter.register_structure_hook(Optional[Union[str, bool]], _optional_str_or_bool)  # noqa: UP007, UP045
    return converter


def _valid_id(value: Any) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _describe(exc: Exception) -> str:
    """The fields that did not fit, one clause each (``$`` is the message)."""
    if isinstance(exc, cattrs.BaseValidationError):
        problems = cattrs.transform_error(exc, path="$")
        if problems:
            shown = "; ".join(problems[:3])
            return shown + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
    return str(exc) or type(exc).__name__


class _QuietDecodeErrors(logging.Filter):
    """pygls's read loop logs a traceback for every body it cannot decode; the protocol answers
    those with a Parse error and logs them in one line, so the traceback is noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError))


_QUIET = _QuietDecodeErrors()


class NikaProtocol(LanguageServerProtocol):
    """pygls's language server protocol with total message handling (see the module docstring).

    Document synchronisation does not go through pygls's workspace: :mod:`nika_lsp.documents`
    keeps the text, applying incremental edits with the client's notion of lines. The builtin
    open/change/close handlers therefore only pass the notification on to the server's own.
    """

    def __init__(self, server: Any, converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        self._initialize_seen = False
        self._writes: set[asyncio.Future[Any]] = set()
        pygls_server_log = logging.getLogger("pygls.server")
        if _QUIET not in pygls_server_log.filters:
            pygls_server_log.addFilter(_QUIET)

    # -- decoding --------------------------------------------------------------------------
    def structure_message(self, data: dict[str, Any]) -> Any:
        """The JSON decoder's hook: leave every object as it is; :meth:`handle_message`
        structures the whole message once it knows which part failed."""
        return data

    def handle_message(self, message: Any) -> None:
        typed = self._structure(message)
        if typed is not None:
            super().handle_message(typed)

    def _structure(self, data: Any) -> Any | None:
        """The typed message, or ``None`` once a message that cannot be handled is answered or logged."""
        if not isinstance(data, dict):
            what = "a batch (JSON array)" if isinstance(data, list) else _json_type(data)
            self._reply_error(None, JsonRpcInvalidRequest(f"Invalid Request: expected a message object, got {what}"))
            return None
        if "method" in data:
            return self._structure_call(data)
        if "id" in data and ("result" in data or "error" in data):
            return self._structure_response(data)
        msg_id = data.get("id")
        self._reply_error(
            msg_id if _valid_id(msg_id) else None,
            JsonRpcInvalidRequest("Invalid Request: a message needs a method, or a result or error with an id"),
        )
        return None

    def _structure_call(self, data: dict[str, Any]) -> Any | None:
        method = data["method"]
        is_request = "id" in data
        msg_id = data.get("id")
        if is_request and not _valid_id(msg_id):
            self._reply_error(None, JsonRpcInvalidRequest("Invalid Request: a request id is a string or an integer"))
            return None
        problem: JsonRpcException | None = None
        if data.get("jsonrpc") != self.VERSION or not isinstance(method, str):
            problem = JsonRpcInvalidRequest('Invalid Request: expected "jsonrpc": "2.0" and a string "method"')
        elif self._shutdown and method != lsp.EXIT:
            problem = JsonRpcInvalidRequest(f"Invalid Request: the server is shutting down ({method} refused)")
        elif self._initialize_seen and method == lsp.INITIALIZE and is_request:
            # LSP 3.17 §initialize: the request is sent once; a second one is an error.
            problem = JsonRpcInvalidRequest("Invalid Request: initialize was already received")
        elif not self._initialize_seen and method not in (lsp.INITIALIZE, lsp.EXIT):
            problem = JsonRpcServerNotInitialized(f"Server not initialized: {method} before initialize")
        if problem is None:
            fallback = JsonRPCRequestMessage if is_request else JsonRPCNotification
            try:
                typed = self._converter.structure(data, self.get_message_type(method) or fallback)
            except Exception as exc:
                problem = JsonRpcInvalidParams(f"Invalid params for {method}: {_describe(exc)}")
            else:
                if is_request and not hasattr(typed, "id"):
                    problem = JsonRpcInvalidRequest(f"Invalid Request: {method} is a notification and takes no id")
                else:
                    if method == lsp.INITIALIZE and is_request:
                        self._initialize_seen = True
                    return typed
        if is_request:
            self._reply_error(msg_id, problem)
        else:
            log.warning("notification %r dropped: %s", method, problem.message)
            if not self._shutdown:  # after `shutdown` the client expects nothing but the exit
                self._tell_client(f"nika: notification {method!r} dropped: {problem.message}")
        return None

    def _tell_client(self, message: str) -> None:
        """A ``window/logMessage`` warning: a dropped notification has no reply to carry why."""
        with contextlib.suppress(Exception):
            self.notify(lsp.WINDOW_LOG_MESSAGE, lsp.LogMessageParams(type=lsp.MessageType.Warning, message=message))

    def _structure_response(self, data: dict[str, Any]) -> Any | None:
        """A response to one of our requests (the client never gets an answer to an answer)."""
        msg_id = data["id"]
        try:
            if "error" in data:
                return self._converter.structure(data, lsp.ResponseErrorMessage)
            expected = self._result_types.pop(msg_id, None) if _valid_id(msg_id) else None
            return self._converter.structure(data, expected or JsonRPCResponseMessage)
        except Exception as exc:
            log.warning("response %r dropped: %s", msg_id, _describe(exc))
            future = self._request_futures.pop(msg_id, None) if _valid_id(msg_id) else None
            if future is not None and not future.done():
                future.set_exception(JsonRpcInvalidParams(f"malformed response: {_describe(exc)}"))
            return None

    # -- answering ---------------------------------------------------------------------------
    def _reply_error(self, msg_id: MsgId | None, exc: JsonRpcException) -> None:
        log.warning("request %s answered with error %d: %s", json.dumps(msg_id), exc.code, exc.message)
        if msg_id is None:
            # lsprotocol drops a None id when it serialises; JSON-RPC wants an explicit null.
            error = {"code": exc.code, "message": exc.message}
            self._send_data({"jsonrpc": self.VERSION, "id": None, "error": error})
        else:
            self._send_response(msg_id, error=exc.to_response_error())

    def reply_parse_error(self, exc: Exception) -> None:
        """Answer a body that is not JSON (its id cannot be known, so ``id: null``)."""
        self._reply_error(None, JsonRpcParseError(f"Parse error: {exc}"))

    def _send_data(self, data: Any) -> None:
        """pygls's writer, except that an answer which cannot be serialised becomes an Internal
        error for the same id instead of no answer at all."""
        if not data:
            return
        try:
            body = json.dumps(data, default=self._serialize_message)
        except Exception as exc:
            msg_id = getattr(data, "id", None)
            log.exception("message %s could not be serialised", json.dumps(msg_id if _valid_id(msg_id) else None))
            if not (_valid_id(msg_id) and (hasattr(data, "result") or hasattr(data, "error"))):
                return  # not an answer: a notification or a request of ours is dropped
            error = {"code": JsonRpcInternalError.CODE, "message": f"Internal error: unserialisable answer ({exc})"}
            body = json.dumps({"jsonrpc": self.VERSION, "id": msg_id, "error": error})
        if self.writer is None:
            log.error("no transport to send %d bytes on", len(body))
            return
        payload = body.encode(self.CHARSET)
        if self._include_headers:
            header = (
                f"Content-Length: {len(payload)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            )
            payload = header.encode("ascii") + payload
        written = self.writer.write(payload)
        if inspect.isawaitable(written):
            task = asyncio.ensure_future(written)
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)

    def _execute_handler(
        self,
        msg_id: MsgId,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        """As pygls, but a finished handler's Future is always dropped from ``_request_futures``:
        pygls pops it only when answering a request, so every notification run as a generator or
        in a thread (and every step of a generator) left one behind for the process's life."""

        def done(future: Future[Any]) -> None:
            if self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
            callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)

    def _send_handler_result(self, future: Future[Any], *, msg_id: MsgId) -> None:
        exc = None if future.cancelled() else future.exception()
        if isinstance(exc, JsonRpcException):
            # A deliberate refusal: answer it, log one line (pygls would print a traceback).
            self._request_futures.pop(msg_id, None)
            log.info("request %s refused (%d): %s", json.dumps(msg_id), exc.code, exc.message)
            self._send_response(msg_id, error=exc.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    # -- document synchronisation: the server's Documents own the text ------------------------
    @lsp_method(lsp.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: lsp.DidOpenTextDocumentParams) -> Any:
        # A plain method, not a generator: pygls keeps the Future of a generator notification
        # in ``_request_futures`` forever (about 2 KB per edit).
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_OPEN)) is not None:
            handler(params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams) -> Any:
        # A plain method, not a generator: pygls keeps the Future of a generator notification
        # in ``_request_futures`` forever (about 2 KB per edit).
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            handler(params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: lsp.DidCloseTextDocumentParams) -> Any:
        # A plain method, not a generator: pygls keeps the Future of a generator notification
        # in ``_request_futures`` forever (about 2 KB per edit).
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            handler(params)
