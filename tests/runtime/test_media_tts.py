"""nika:tts_generate: the mock's real WAV, each speech wire (openai, elevenlabs, local) against a
loopback server, and the payload ladder (-003 / -004 / -007)."""

from __future__ import annotations

import json
import re

import pytest
from fake_llm import Reply, serve
from test_media_providers import KEY, gen, refused

from runtime.media.tts_wires import mock_wav

MP3 = b"ID3\x03\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x00" * 64

SPEECH = {"text": "The launch is live.", "output_dir": "audio"}


async def test_mock_speech_is_a_real_deterministic_wav(tmp_path):
    out, _ = await gen(tmp_path, {**SPEECH, "provider": "mock"}, tool="nika:tts_generate")
    audio = out["audio"]
    data = (tmp_path / audio["path"]).read_bytes()
    assert data == mock_wav(SPEECH["text"], "sine") and data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    assert (audio["format"], audio["mime_type"]) == ("wav", "audio/wav")
    assert audio["duration_ms"] == 200 + 50 * len(SPEECH["text"])  # exact header arithmetic
    assert re.fullmatch(r"speech-mock-mock-tts-1-[0-9a-f]{8}\.wav", audio["filename"])
    assert json.loads((tmp_path / out["manifest_path"]).read_text())["audio"]["sha256"] == audio["sha256"]


async def test_openai_speech_wire_and_mp3_duration_is_null(tmp_path):
    with serve([Reply(200, MP3)]) as fake:
        out, _ = await gen(
            tmp_path, {**SPEECH, "model": "gpt-4o-mini-tts", "speed": 1.5, "format": "mp3"},
            {"NIKA_OPENAI_TTS_URL": fake.url + "/v1/audio/speech", "OPENAI_API_KEY": KEY}, tool="nika:tts_generate",
        )  # fmt: skip
    assert fake.seen[0].body == {
        "model": "gpt-4o-mini-tts",
        "input": SPEECH["text"],
        "voice": "alloy",
        "response_format": "mp3",
        "speed": 1.5,
    }
    assert out["audio"]["format"] == "mp3" and out["audio"]["duration_ms"] is None and out["provider"] == "openai"


async def test_elevenlabs_speech_wire(tmp_path):
    with serve([Reply(200, MP3)]) as fake:
        out, _ = await gen(
            tmp_path, {**SPEECH, "provider": "elevenlabs", "speed": 2.0},
            {"NIKA_ELEVENLABS_TTS_URL": fake.url + "/v1/text-to-speech/{voice}", "ELEVENLABS_API_KEY": KEY},
            tool="nika:tts_generate",
        )  # fmt: skip
    seen = fake.seen[0]
    assert seen.path == "/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM?output_format=mp3_44100_128"
    assert seen.headers["xi-api-key"] == KEY and seen.body == {
        "text": SPEECH["text"],
        "model_id": "eleven_multilingual_v2",
    }
    assert out["warnings"][0].startswith("speed_unsupported:")


async def test_local_speech_wire(tmp_path):
    with serve([Reply(200, mock_wav("x", "alloy"))]) as fake:
        out, _ = await gen(
            tmp_path, {**SPEECH, "provider": "local"}, {"NIKA_TTS_LOCAL_URL": fake.url}, tool="nika:tts_generate"
        )
    assert fake.seen[0].path == "/v1/audio/speech" and out["audio"]["format"] == "wav"


@pytest.mark.parametrize(
    "reply, code", [(Reply(200, b""), "004"), (Reply(200, b'{"ok": true}'), "007"), (Reply(503, b"down"), "003")]
)
async def test_speech_failures(tmp_path, reply, code):
    with serve([reply]) as fake:
        e = await refused(
            tmp_path, {**SPEECH, "provider": "local"}, {"NIKA_TTS_LOCAL_URL": fake.url}, tool="nika:tts_generate"
        )
    assert e.code == f"NIKA-BUILTIN-TTS_GENERATE-{code}"


async def test_an_elevenlabs_voice_must_be_an_id(tmp_path):
    env = {"ELEVENLABS_API_KEY": KEY}
    e = await refused(
        tmp_path, {**SPEECH, "provider": "elevenlabs", "voice": "../../admin"}, env, tool="nika:tts_generate"
    )
    assert e.code == "NIKA-BUILTIN-TTS_GENERATE-001"
