"""``infer.vision`` against the loopback fake provider: the image parts each wire sends, images
read under ``permits.fs.read`` and fetched under ``permits.net`` and the SSRF floor, and the
refusals (outside the grant, not an image, too many), each before any model call."""

from __future__ import annotations

import base64

import pytest
from fake_llm import anthropic, gemini, openai, serve

from checker.engine.pipeline import compile_text

KEY = "vision-key-0123456789"
NET_LOOPBACK = "permits: { net: { http: ['127.0.0.1'] } }"
NET_ORG = "permits: { net: { http: [example.org] } }"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(64))
JPEG = b"\xff\xd8\xff\xe0" + bytes(range(32))
WIRES = {
    "openai": (lambda u: {"NIKA_OPENAI_BASE_URL": u + "/v1/chat/completions", "OPENAI_API_KEY": KEY}, openai),
    "anthropic": (lambda u: {"NIKA_ANTHROPIC_BASE_URL": u + "/v1/messages", "ANTHROPIC_API_KEY": KEY}, anthropic),
    "gemini": (lambda u: {"NIKA_GEMINI_BASE_URL": u + "/m/{model}", "GOOGLE_API_KEY": KEY}, gemini),
}


def vision_wf(model: str, images: str, permits: str = "permits: { fs: { read: ['./img/**'] } }") -> str:
    return (
        f"nika: v1\nworkflow: {{ id: v }}\n{permits}\ninputs:\n  pic: {{ type: string, default: ./img/a.png }}\n"
        f'tasks:\n  t:\n    infer:\n      model: {model}\n      prompt: "What is this?"\n      vision: {images}\n'
    )


@pytest.fixture
def pictures(tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(PNG)
    (tmp_path / "img" / "b.jpg").write_bytes(JPEG)
    (tmp_path / "img" / "note.txt").write_text("not an image")
    (tmp_path / "secret.png").write_bytes(PNG)
    return tmp_path


@pytest.mark.parametrize("wire", list(WIRES))
def test_file_images_are_sent_as_each_wires_inline_parts(run, pictures, wire):
    env, reply = WIRES[wire]
    images = "[{ source: file, path: ./img/a.png }, { source: file, path: ./img/b.jpg }]"
    with serve([reply("a chart")]) as fake:
        result = run(vision_wf(f"{wire}/m", images), engine_env=env(fake.url))
    assert result.tasks["t"].status == "success", result.tasks["t"].error
    png, jpg = base64.b64encode(PNG).decode(), base64.b64encode(JPEG).decode()
    body = fake.seen[0].body
    if wire == "openai":
        assert body["messages"][0]["content"] == [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
            {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{jpg}"}},
        ]
    elif wire == "anthropic":
        assert body["messages"][0]["content"] == [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": jpg}},
            {"type": "text", "text": "What is this?"},
        ]
    else:
        assert body["contents"][0]["parts"] == [
            {"text": "What is this?"},
            {"inlineData": {"mimeType": "image/png", "data": png}},
            {"inlineData": {"mimeType": "image/jpeg", "data": jpg}},
        ]
    call = next(e for e in result.events if e["type"] == "verb.invoked" and e.get("phase") == "model_call")
    assert call["images"] == 2


def test_a_url_image_is_fetched_through_the_permits_and_sent_inline(run, pictures):
    with serve([openai("a cat")]) as fake:
        fake.files["/cat.png"] = ("image/png", PNG)
        env = {**WIRES["openai"][0](fake.url), "NIKA_FETCH_ALLOW_PRIVATE": "127.0.0.1"}
        wf = vision_wf("openai/m", f"[{{ source: url, url: '{fake.url}/cat.png' }}]", NET_LOOPBACK)
        result = run(wf, engine_env=env)
    assert result.tasks["t"].status == "success", result.tasks["t"].error
    assert fake.gets == ["/cat.png"]
    part = fake.seen[0].body["messages"][0]["content"][1]
    assert part["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()


def test_a_url_image_on_a_private_address_stops_at_the_ssrf_floor(run, pictures):
    with serve([openai("never")]) as fake:
        fake.files["/cat.png"] = ("image/png", PNG)
        wf = vision_wf("openai/m", f"[{{ source: url, url: '{fake.url}/cat.png' }}]", NET_LOOPBACK)
        result = run(wf, engine_env=WIRES["openai"][0](fake.url))  # no NIKA_FETCH_ALLOW_PRIVATE
    assert result.tasks["t"].error["code"] == "NIKA-SEC-004"
    assert (fake.gets, fake.count) == ([], 0)


def test_a_url_image_needs_its_host_granted(run, pictures):
    with serve([openai("never")]) as fake:
        env = {**WIRES["openai"][0](fake.url), "NIKA_FETCH_ALLOW_PRIVATE": "127.0.0.1"}
        wf = vision_wf("openai/m", "[{ source: url, url: '${{ inputs.pic }}' }]", NET_ORG)
        result = run(wf, {"pic": f"{fake.url}/cat.png"}, engine_env=env)
    err = result.tasks["t"].error
    assert err["code"] == "NIKA-SEC-004" and "127.0.0.1" in err["message"]
    assert (fake.gets, fake.count) == ([], 0)


def test_a_computed_path_outside_fs_read_is_refused_at_run(run, pictures):
    with serve([openai("never")]) as fake:
        wf = vision_wf("openai/m", "[{ source: file, path: '${{ inputs.pic }}' }]")
        result = run(wf, {"pic": "./secret.png"}, engine_env=WIRES["openai"][0](fake.url))
    err = result.tasks["t"].error
    assert err["code"] == "NIKA-SEC-004" and "permits.fs.read" in err["message"]
    assert fake.count == 0


def test_a_literal_path_outside_fs_read_is_refused_at_check(tmp_path):
    src = vision_wf("mock/echo", "[{ source: file, path: ./secret.png }]")
    compiled = compile_text(src, str(tmp_path / "wf.nika.yaml"), str(tmp_path))
    codes = [(d.code, d.message) for d in compiled.diagnostics if d.is_error]
    assert [c for c, _ in codes] == ["NIKA-SEC-004"], codes
    assert "secret.png" in compiled.source.text[compiled.diagnostics[0].span.start :] or codes
    inside = compile_text(
        vision_wf("mock/echo", "[{ source: file, path: ./img/a.png }]"), "wf.nika.yaml", str(tmp_path)
    )
    assert not [d for d in inside.diagnostics if d.is_error]


def test_a_literal_url_outside_net_is_refused_at_check(tmp_path):
    src = vision_wf("mock/echo", "[{ source: url, url: 'https://evil.example/x.png' }]", NET_ORG)
    compiled = compile_text(src, str(tmp_path / "wf.nika.yaml"), str(tmp_path))
    assert [d.code for d in compiled.diagnostics if d.is_error] == ["NIKA-SEC-004"]


def test_without_permits_a_vision_file_asks_for_the_block(tmp_path):
    src = vision_wf("mock/echo", "[{ source: file, path: ./img/a.png }]", permits="")
    compiled = compile_text(src, str(tmp_path / "wf.nika.yaml"), str(tmp_path))
    assert [d.code for d in compiled.diagnostics if d.is_error] == ["NIKA-AUTH-006"]


def test_a_file_that_is_not_an_image_is_never_sent(run, pictures):
    with serve([openai("never")]) as fake:
        result = run(
            vision_wf("openai/m", "[{ source: file, path: ./img/note.txt }]"), engine_env=WIRES["openai"][0](fake.url)
        )
    err = result.tasks["t"].error
    assert err["code"] == "NIKA-INFER-001" and "not a PNG, JPEG, GIF or WebP" in err["message"]
    assert fake.count == 0


def test_a_missing_image_file_is_a_typed_failure(run, pictures):
    result = run(vision_wf("mock/echo", "[{ source: file, path: ./img/gone.png }]"))
    err = result.tasks["t"].error
    assert err["code"] == "NIKA-INFER-001" and "cannot be read" in err["message"]


def test_mock_echo_judges_and_reads_the_images_and_echoes_the_prompt(run, pictures):
    result = run(vision_wf("mock/echo", "[{ source: file, path: ./img/a.png }]"))
    assert result.tasks["t"].output == "What is this?"
    fs = [e for e in result.events if e.get("plane") == "fs" and e.get("gate") == "./img/a.png"]
    assert [e["decision"] for e in fs] == ["allow"], fs


def test_the_literal_the_check_refuses_the_run_refuses_with_the_same_code(pictures):
    """Check ≡ run: the run-time boundary, asked about the literal the checker refused (the check
    gate bypassed), refuses it with the same code, before any model call."""
    import asyncio

    from runtime.engine.inputs import bind_inputs
    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    src = vision_wf("mock/echo", "[{ source: file, path: ./secret.png }]")
    compiled = compile_text(src, str(pictures / "wf.nika.yaml"), str(pictures))
    assert [d.code for d in compiled.diagnostics if d.is_error] == ["NIKA-SEC-004"]
    bound = bind_inputs(compiled.workflow, {})
    result = asyncio.run(
        Run(compiled, bound, Options(trace_dir=pictures / "traces"), verbs=VERBS, workdir=pictures).execute()
    )
    assert result.tasks["t"].error["code"] == "NIKA-SEC-004"


def test_a_symlink_out_of_the_grant_is_refused(run, pictures):
    (pictures / "img" / "link.png").symlink_to(pictures / "secret.png")
    result = run(vision_wf("mock/echo", "[{ source: file, path: ./img/link.png }]"))
    err = result.tasks["t"].error
    assert err["code"] == "NIKA-SEC-004" and "secret.png" in err["message"]


def test_an_image_over_the_cap_is_never_sent(run, pictures, monkeypatch):
    from runtime.guard import limits

    monkeypatch.setattr(limits, "MAX_IMAGE_BYTES", 32)
    with serve([openai("never")]) as fake:
        fake.files["/big.png"] = ("image/png", PNG)
        env = {**WIRES["openai"][0](fake.url), "NIKA_FETCH_ALLOW_PRIVATE": "127.0.0.1"}
        by_url = run(
            vision_wf("openai/m", f"[{{ source: url, url: '{fake.url}/big.png' }}]", NET_LOOPBACK), engine_env=env
        )
        by_file = run(vision_wf("openai/m", "[{ source: file, path: ./img/a.png }]"), engine_env=env)
    for result in (by_url, by_file):
        err = result.tasks["t"].error
        assert err["code"] == "NIKA-INFER-001" and "image cap" in err["message"], err
    assert fake.count == 0


def test_an_entry_without_source_is_judged_by_the_key_it_has(tmp_path):
    src = vision_wf("mock/echo", "[{ url: 'https://evil.example/x.png' }]", NET_ORG)
    compiled = compile_text(src, str(tmp_path / "wf.nika.yaml"), str(tmp_path))
    assert [d.code for d in compiled.diagnostics if d.is_error] == ["NIKA-SEC-004"]
