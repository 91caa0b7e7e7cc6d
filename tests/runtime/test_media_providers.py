"""nika:image_generate: the mock offline, each provider's wire against a
loopback server (requests as sent, replies as read), the error ladder, the file names and
manifests, the permit before any call, and no asset bytes in outputs, events or the trace."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from builtins_harness import fails, make_ctx
from fake_llm import Reply, serve

from runtime.builtins import call
from runtime.engine.services import Services
from runtime.media.image_wires import mock_png

KEY = "sk-test-key-0123456789abcdef"
PNG = mock_png("fixture", 0, 0, (8, 6), "fixture")
PNG_B64 = base64.b64encode(PNG).decode()
NAME = re.compile(r"hero-[a-z0-9]+-[a-z0-9._-]+-\d+-[0-9a-f]{8}\.png")


async def gen(tmp: Path, args: dict, env: dict | None = None, tool: str = "nika:image_generate"):
    services = Services(env or {}, tmp)
    ctx, events = make_ctx(tmp, services=services)
    try:
        return await call(tool, args, ctx), events
    finally:
        await services.aclose()


async def refused(tmp: Path, args: dict, env: dict, tool: str = "nika:image_generate"):
    services = Services(env, tmp)
    ctx, _ = make_ctx(tmp, services=services)
    try:
        return await fails(tool, args, ctx)
    finally:
        await services.aclose()


IMG = {"prompt": "a monarch", "output_dir": "assets", "filename_prefix": "hero"}


async def test_mock_writes_named_images_and_a_manifest_idempotently(tmp_path):
    out, events = await gen(tmp_path, {**IMG, "provider": "mock", "n": 2, "aspect_ratio": "16:9", "metadata": {"k": 1}})
    assert out["count"] == 2 and out["provider"] == "mock" and out["model"] == "mock-image-1"
    img = out["images"][0]
    assert NAME.fullmatch(img["filename"]) and (img["width"], img["height"], img["format"]) == (96, 54, "png")
    assert (tmp_path / img["path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    manifest = json.loads((tmp_path / out["manifest_path"]).read_text())
    assert manifest["manifest_version"] == 1 and manifest["images"][1]["sha256"] == out["images"][1]["sha256"]
    assert out["usage"] == dict.fromkeys(("input_tokens", "output_tokens", "total_tokens", "thoughts_tokens"))
    assert out["cost_usd"] is None and out["images"][0]["metadata"] == {"k": 1}
    again, _ = await gen(tmp_path, {**IMG, "provider": "mock", "n": 2, "aspect_ratio": "16:9", "metadata": {"k": 1}})
    assert [i["path"] for i in again["images"]] == [i["path"] for i in out["images"]]
    assert len(list((tmp_path / "assets").glob("*.png"))) == 2
    assert [sorted(e) for e in events] == [["bytes", "path", "sha256", "task", "tool", "type", "wrote"]] * 2


def openai_env(url: str) -> dict:
    return {"NIKA_OPENAI_IMAGE_URL": url + "/v1/images/generations", "OPENAI_API_KEY": KEY}


async def test_openai_wire_request_and_reply(tmp_path):
    usage = {"input_tokens": 12, "output_tokens": 400, "total_tokens": 412}
    with serve(
        [Reply(200, {"data": [{"b64_json": PNG_B64, "revised_prompt": "a monarch, detailed"}], "usage": usage})]
    ) as fake:
        out, _ = await gen(
            tmp_path,
            {**IMG, "model": "gpt-image-2", "aspect_ratio": "16:9", "quality": "ultra", "seed": 3},
            openai_env(fake.url),
        )
    seen = fake.seen[0]
    assert seen.path == "/v1/images/generations" and seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.body == {"model": "gpt-image-2", "prompt": "a monarch", "n": 1, "size": "1536x1024", "quality": "high"}
    assert out["provider"] == "openai" and out["revised_prompt"] == "a monarch, detailed"
    assert out["usage"] == {**usage, "thoughts_tokens": None}
    assert {w.split(":")[0] for w in out["warnings"]} == {"aspect_remapped", "quality_folded", "seed_unsupported"}
    assert out["endpoint_host"] == "127.0.0.1"
    assert KEY not in json.dumps(out) and KEY not in (tmp_path / out["manifest_path"]).read_text()


async def test_local_wire_asks_for_b64(tmp_path):
    with serve([Reply(200, {"data": [{"b64_json": PNG_B64}]})]) as fake:
        out, _ = await gen(tmp_path, {**IMG, "provider": "local"}, {"NIKA_IMAGE_LOCAL_URL": fake.url})
    assert fake.seen[0].body["response_format"] == "b64_json" and fake.seen[0].body["model"] == "stablediffusion"
    assert out["images"][0]["provider"] == "local"


async def test_xai_reports_its_real_cost(tmp_path):
    reply = {"data": [{"b64_json": PNG_B64}], "usage": {"cost_in_usd_ticks": 700_000_000}}
    with serve([Reply(200, reply)]) as fake:
        out, _ = await gen(
            tmp_path,
            {**IMG, "model": "grok-imagine-image"},
            {"NIKA_XAI_IMAGE_URL": fake.url + "/img", "XAI_API_KEY": KEY},
        )
    assert out["provider"] == "xai" and out["cost_usd"] == 0.07 and fake.seen[0].body["response_format"] == "b64_json"


def env(u: str) -> dict:
    return {"NIKA_GEMINI_IMAGE_URL": u + "/v1beta/models/{model}:generateContent", "GOOGLE_API_KEY": KEY}


def gemini_reply(finish: str = "STOP", with_image: bool = True) -> dict:
    parts = [{"text": "Here is your butterfly."}] + (
        [{"inlineData": {"mimeType": "image/png", "data": PNG_B64}}] if with_image else []
    )
    return {
        "candidates": [{"content": {"parts": parts}, "finishReason": finish}],
        "usageMetadata": {
            "promptTokenCount": 5,
            "candidatesTokenCount": 1290,
            "totalTokenCount": 1300,
            "thoughtsTokenCount": 5,
        },
    }


async def test_gemini_wire(tmp_path):
    with serve([Reply(200, gemini_reply())]) as fake:
        out, _ = await gen(tmp_path, {**IMG, "provider": "gemini", "aspect_ratio": "3:2"}, env(fake.url))
    seen = fake.seen[0]
    assert (
        seen.path == "/v1beta/models/gemini-3.1-flash-image:generateContent" and seen.headers["x-goog-api-key"] == KEY
    )
    assert seen.body["generationConfig"]["imageConfig"] == {"aspectRatio": "3:2"}
    assert out["provider_text"] == "Here is your butterfly." and out["usage"]["thoughts_tokens"] == 5


async def test_gemini_safety_stop_is_a_policy_block(tmp_path):
    with serve([Reply(200, gemini_reply("IMAGE_SAFETY", with_image=False))]) as fake:
        e = await refused(tmp_path, {**IMG, "provider": "gemini"}, env(fake.url))
    assert e.code == "NIKA-BUILTIN-IMAGE_GENERATE-005" and not e.transient


@pytest.mark.parametrize(
    "reply, code, transient",
    [
        (Reply(500, {"error": {"message": f"boom, key {KEY}"}}), "003", True),
        (Reply(429, {"error": "slow down"}), "003", True),
        (Reply(401, {"error": "bad key"}), "003", False),
        (Reply(400, {"error": {"code": "content_policy_violation"}}), "005", False),
        (Reply(200, {"data": [{"b64_json": base64.b64encode(b"<html>not an image</html>").decode()}]}), "007", False),
        (Reply(200, {"data": []}), "004", False),
        (Reply(200, {"data": [{"url": "https://cdn.example/x.png"}]}), "004", False),
        (Reply(200, "not json"), "004", False),
    ],
)
async def test_provider_failures_get_their_codes_and_leave_nothing(tmp_path, reply, code, transient):
    with serve([reply]) as fake:
        e = await refused(tmp_path, {**IMG, "provider": "openai"}, openai_env(fake.url))
    assert e.code == f"NIKA-BUILTIN-IMAGE_GENERATE-{code}" and e.transient is transient, e.message
    assert KEY not in e.message
    assert not (tmp_path / "assets").exists() or not any((tmp_path / "assets").iterdir())
    if code == "003":
        assert e.details["status_code"] == reply.status


async def test_a_missing_key_names_the_variable(tmp_path):
    e = await refused(tmp_path, {**IMG, "provider": "openai"}, {})
    assert e.code == "NIKA-BUILTIN-IMAGE_GENERATE-002" and "OPENAI_API_KEY" in e.message


async def test_output_dir_outside_the_grant_is_refused_before_the_provider_is_called(tmp_path):
    inside = tmp_path / "in"
    inside.mkdir()
    with serve([Reply(200, {"data": [{"b64_json": PNG_B64}]})]) as fake:
        e = await refused(inside, {**IMG, "provider": "openai", "output_dir": "../out"}, openai_env(fake.url))
    assert e.code == "NIKA-SEC-004" and fake.seen == []


# ---- the whole run: bytes never in outputs, report or trace -------------------------------------

WF = """
nika: v1
workflow: { id: media }
permits:
  tools: ["nika:*"]
  fs: { write: ["assets/**"] }
tasks:
  hero:
    invoke:
      tool: "nika:image_generate"
      args: { provider: openai, prompt: "a monarch", output_dir: assets }
"""


def test_no_base64_of_the_asset_in_the_run_report_or_trace(run, tmp_path):
    with serve([Reply(200, {"data": [{"b64_json": PNG_B64}]})]) as fake:
        result = run(WF, engine_env=openai_env(fake.url))
    rec = result.tasks["hero"]
    assert rec.status == "success", rec.error
    saved = (tmp_path / rec.output["images"][0]["path"]).read_bytes()
    needles = [PNG_B64[:40], base64.b64encode(saved).decode()[:40], KEY]
    report = json.dumps({t: (r.output, r.status) for t, r in result.tasks.items()}, default=str)
    traces = "".join(p.read_text() for p in (tmp_path / "traces").glob("*.ndjson"))
    assert '"artifact"' in traces and rec.output["images"][0]["sha256"] in traces
    for needle in needles:
        assert needle not in report and needle not in traces


# ---- mode: edit ---------------------------------------------------------------------------------


async def test_openai_edit_sends_the_sources_multipart_to_the_edits_endpoint(tmp_path):
    (tmp_path / "src.png").write_bytes(PNG)
    (tmp_path / "mask.png").write_bytes(mock_png("mask", 0, 0, (8, 6), "m"))
    args = {**IMG, "provider": "openai", "mode": "edit", "images": ["src.png", "src.png"], "mask": "mask.png"}
    with serve([Reply(200, {"data": [{"b64_json": PNG_B64}]})]) as fake:
        out, _ = await gen(tmp_path, args, openai_env(fake.url))
    seen = fake.seen[0]
    assert seen.path == "/v1/images/edits" and seen.headers["content-type"].startswith("multipart/form-data")
    raw = seen.body
    assert raw.count(b'name="image[]"') == 2 and b'name="mask"' in raw and b'name="prompt"' in raw and PNG in raw
    assert out["mode"] == "edit" and out["count"] == 1


async def test_gemini_edit_inlines_the_sources(tmp_path):
    (tmp_path / "src.png").write_bytes(PNG)
    with serve([Reply(200, gemini_reply())]) as fake:
        await gen(tmp_path, {**IMG, "provider": "gemini", "mode": "edit", "image": "src.png"}, env(fake.url))
    parts = fake.seen[0].body["contents"][0]["parts"]
    assert parts[0]["inlineData"] == {"mimeType": "image/png", "data": PNG_B64} and parts[1] == {"text": IMG["prompt"]}


async def test_mock_edit_depends_on_the_source_bytes(tmp_path):
    (tmp_path / "a.png").write_bytes(PNG)
    (tmp_path / "b.png").write_bytes(mock_png("other", 0, 0, (8, 6), "x"))
    a, _ = await gen(tmp_path, {**IMG, "provider": "mock", "mode": "edit", "image": "a.png"})
    b, _ = await gen(tmp_path, {**IMG, "provider": "mock", "mode": "edit", "image": "b.png"})
    assert a["images"][0]["sha256"] != b["images"][0]["sha256"]


async def test_edit_sources_are_read_through_the_boundary_and_must_be_images(tmp_path):
    inside = tmp_path / "in"
    inside.mkdir()
    (tmp_path / "secret.png").write_bytes(PNG)
    (inside / "notes.txt").write_text("not a picture")
    e = await refused(inside, {**IMG, "provider": "mock", "mode": "edit", "image": "../secret.png"}, {})
    assert e.code == "NIKA-SEC-004"
    e = await refused(inside, {**IMG, "provider": "mock", "mode": "edit", "image": "notes.txt"}, {})
    assert e.code == "NIKA-BUILTIN-IMAGE_GENERATE-001" and "not usable" in e.message
    many = {**IMG, "provider": "xai", "mode": "edit", "images": ["notes.txt"] * 4}
    e = await refused(inside, many, {"XAI_API_KEY": KEY})
    assert e.code == "NIKA-BUILTIN-IMAGE_GENERATE-001" and "at most 3" in e.message


async def test_unsupported_knobs_warn_or_refuse_never_vanish(tmp_path):
    args = {**IMG, "provider": "mock", "compression": 50, "provider_options": {"style": "vivid"}}
    out, _ = await gen(tmp_path, args)
    assert {w.split(":")[0] for w in out["warnings"]} == {"compression_ignored", "provider_option_unknown"}
    e = await refused(tmp_path, {**IMG, "provider": "local", "background": "transparent"}, {})
    assert e.code == "NIKA-BUILTIN-IMAGE_GENERATE-001" and "alpha" in e.message


async def test_gemini_options_are_mapped_and_debug_echo_strips_payloads(tmp_path):
    args = {**IMG, "provider": "gemini", "quality": "high", "debug": True, "provider_options": {"image_size": "2K"}}
    with serve([Reply(200, gemini_reply())]) as fake:
        out, _ = await gen(tmp_path, args, env(fake.url))
    assert fake.seen[0].body["generationConfig"]["imageConfig"] == {"imageSize": "2K"}
    assert out["warnings"][0].startswith("quality_folded:")
    echoed = json.dumps(out["debug"])
    assert PNG_B64[:40] not in echoed and "characters stripped" in echoed and "Here is your butterfly." in echoed


async def test_one_bad_payload_in_a_batch_writes_nothing(tmp_path):
    bad = base64.b64encode(b"GIF89a....").decode()
    with serve([Reply(200, {"data": [{"b64_json": PNG_B64}, {"b64_json": bad}]})]) as fake:
        e = await refused(tmp_path, {**IMG, "provider": "openai", "n": 2}, openai_env(fake.url))
    assert e.code == "NIKA-BUILTIN-IMAGE_GENERATE-007"
    assert not (tmp_path / "assets").exists() or not any((tmp_path / "assets").iterdir())


async def test_fewer_images_than_asked_is_a_warning(tmp_path):
    with serve([Reply(200, {"data": [{"b64_json": PNG_B64}]})]) as fake:
        out, _ = await gen(tmp_path, {**IMG, "provider": "local", "n": 3}, {"NIKA_IMAGE_LOCAL_URL": fake.url})
    assert out["count"] == 1 and any(w.startswith("count_shortfall:") for w in out["warnings"])
    assert fake.seen[0].body["n"] == 3
