"""Settings: one typed, frozen object read from every shape clients send, with a log line for
anything ignored."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from raw_client import RawClient

from nika_lsp.settings import Settings, parse

pytestmark = pytest.mark.xdist_group("lsp-settings")  # one worker starts the module's server

URI = "file:///tmp/nika-settings/flow.nika.yaml"
DOC = (
    "nika: v1\nworkflow:\n  id: s\ntasks:\n  a:\n    infer: { model: mock/echo, prompt: x }\n"
    "  b:\n    after: { a: success }\n    infer: { model: mock/echo, prompt: x }\n"
)


def test_defaults_and_frozen() -> None:
    s = Settings()
    assert s.inlay_hints is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.inlay_hints = False  # type: ignore[misc]


@pytest.mark.parametrize(
    ("payload", "bare"),
    [
        ({"inlayHints": False}, True),
        ({"nika": {"inlayHints": False}}, False),
        ({"nika.inlayHints": False}, False),
        ({"nika": {"inlayHints": False}, "python": {"x": 1}}, False),
        ({"inlayHints": False, "python.analysis": {"x": 1}}, False),
    ],
)
def test_every_shape_is_read(payload: Any, bare: bool) -> None:
    parsed = parse(payload, bare=bare)
    assert parsed.found and parsed.settings == Settings(inlay_hints=False) and parsed.problems == ()


def test_unknown_and_ill_typed_keys_are_reported_and_ignored() -> None:
    current = Settings(inlay_hints=False)
    parsed = parse({"nika": {"inlayHints": "yes", "colour": "blue"}}, current)
    assert parsed.settings == current  # the ill-typed value does not replace the current one
    assert len(parsed.problems) == 2
    assert any("`nika.colour`" in p and "unknown" in p for p in parsed.problems)
    assert any("`nika.inlayHints`" in p and "expected bool" in p for p in parsed.problems)


@pytest.mark.parametrize("payload", [None, [], "on", 3, {"python": {"inlayHints": False}}])
def test_payloads_without_our_section_change_nothing(payload: Any) -> None:
    parsed = parse(payload, Settings(inlay_hints=False))
    assert not parsed.found and parsed.settings == Settings(inlay_hints=False) and parsed.problems == ()


def test_the_editor_extensions_own_keys_are_not_reported() -> None:
    # the VS Code extension synchronises the whole `nika` section: its path/args/trace are its own
    sent = {"path": "/v/bin/nika", "args": ["lsp"], "trace": {"server": "off"}, "inlayHints": False}
    parsed = parse({"nika": sent})
    assert parsed.problems == ()
    assert parsed.settings.inlay_hints is False
    assert any("`nika.pathh`" in p for p in parse({"nika": {"pathh": "x"}}).problems)


def test_unset_keys_keep_their_value() -> None:
    assert parse({"nika": {"inlayHints": None}}, Settings(inlay_hints=False)).settings.inlay_hints is False
    assert parse({"nika": {}}, Settings(inlay_hints=False)).settings.inlay_hints is False


# -- over the wire ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[RawClient]:
    c = RawClient()
    options = {"inlayHints": False, "colour": "blue"}
    c.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}, "initializationOptions": options})
    c.notify("initialized", {})
    c.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "yaml", "version": 1, "text": DOC}})
    yield c
    c.call("shutdown", None)
    c.notify("exit", ...)
    c.proc.wait(timeout=30)


def inlay_hints(server: RawClient) -> list[Any]:
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 20, "character": 0}}
    answer = server.call("textDocument/inlayHint", {"textDocument": {"uri": URI}, "range": rng})
    return list(answer["result"] or [])


def test_initialization_options_apply_and_unknown_keys_are_logged(server: RawClient) -> None:
    assert inlay_hints(server) == []
    log = server.next_notification("window/logMessage")["params"]
    assert "nika.colour" in log["message"] and log["type"] == 2  # Warning
    assert any("nika.colour" in line for line in server.stderr)


def test_did_change_configuration_updates_the_settings(server: RawClient) -> None:
    server.notify("workspace/didChangeConfiguration", {"settings": {"nika": {"inlayHints": True}}})
    assert [h["position"]["line"] for h in inlay_hints(server)] == [4, 6]
    server.notify("workspace/didChangeConfiguration", {"settings": {"nika.inlayHints": 0}})  # ill-typed: ignored
    assert len(inlay_hints(server)) == 2
