"""NIKA-PARSE-028: `run: { entropy: none }` with a structural randomness source in the body
(01 §determinism, NEP-0010) — a jittered retry, `nika:uuid` — is refused at check."""

from __future__ import annotations

import pytest

from checker import compile_text

HEAD = "nika: v1\nworkflow: {{ id: det }}\nrun: {{ entropy: {entropy}, clock: virtual }}\ntasks:\n"


def _codes(entropy: str, body: str) -> list[str]:
    found = compile_text(HEAD.format(entropy=entropy) + body, "det.nika.yaml").diagnostics
    return [d.code for d in found if d.code == "NIKA-PARSE-028"]


@pytest.mark.parametrize(
    ("body", "hits"),
    [
        ('  a:\n    infer: { model: mock/echo, prompt: "x" }\n    retry: { max_attempts: 3 }\n', 1),
        ('  a:\n    infer: { model: mock/echo, prompt: "x" }\n    retry: { max_attempts: 3, jitter: true }\n', 1),
        ('  a:\n    infer: { model: mock/echo, prompt: "x" }\n    retry: { max_attempts: 3, jitter: false }\n', 0),
        ('  a:\n    infer: { model: mock/echo, prompt: "x" }\n    retry: { max_attempts: 1 }\n', 0),
        ('  a:\n    infer: { model: mock/echo, prompt: "x" }\n    retry: { max_attempts: 3, backoff_ms: 0 }\n', 0),
        ('  a:\n    invoke: { tool: "nika:uuid" }\n', 1),
        ('  a:\n    infer: { model: mock/echo, prompt: "x" }\n', 0),
    ],
)
def test_entropy_none_refuses_consumed_randomness(body: str, hits: int) -> None:
    assert len(_codes("none", body)) == hits


def test_a_seeded_run_may_jitter_and_draw_ids() -> None:
    body = '  a:\n    invoke: { tool: "nika:uuid" }\n    retry: { max_attempts: 3 }\n'
    assert _codes("{ seeded: 7 }", body) == []
    assert len(_codes("none", body)) == 2
