#!/usr/bin/env python3
"""Check fake-gemini with the official Python SDK (google-genai).

Needs FAKE_GEMINI_URL (the fake's base URL; this script starts nothing) and optionally
MEDIA_DIR (default: <repo>/../shared/media). Exits non-zero on any failure.
"""

import asyncio
import base64
import hashlib
import json
import os
import pathlib
import sys
import time

from google import genai
from google.genai import errors, types

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent.parent


def fail(msg: str) -> None:
    print(f"SDK CHECK FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


def main() -> None:
    url = os.environ.get("FAKE_GEMINI_URL")
    if not url:
        fail("FAKE_GEMINI_URL is not set")
    media_dir = pathlib.Path(os.environ.get("MEDIA_DIR", REPO.parent / "shared" / "media"))
    video = media_dir / "login-flow.webm"
    if not video.is_file():
        fail(f"{video} not found (set MEDIA_DIR)")
    data = video.read_bytes()
    sha_hex = hashlib.sha256(data).hexdigest()

    client = genai.Client(
        api_key="test-gemini-key", http_options=types.HttpOptions(base_url=url)
    )

    # Upload (resumable protocol), then poll until ACTIVE.
    f = client.files.upload(file=str(video), config={"display_name": "login-flow"})
    print(f"uploaded {f.name} state={f.state} size={f.size_bytes}")
    if f.size_bytes != len(data):
        fail(f"size_bytes {f.size_bytes} != {len(data)}")
    if f.display_name != "login-flow":
        fail(f"display_name {f.display_name!r}")
    if f.mime_type != "video/webm":
        fail(f"mime_type {f.mime_type!r}")
    got_hash = base64.b64decode(f.sha256_hash).decode()
    if got_hash != sha_hex:
        fail(f"sha256_hash decodes to {got_hash}, expected {sha_hex}")
    deadline = time.time() + 30
    while f.state is None or f.state.name == "PROCESSING":
        if time.time() > deadline:
            fail("file never left PROCESSING")
        time.sleep(0.2)
        f = client.files.get(name=f.name)
    if f.state.name != "ACTIVE":
        fail(f"file ended in state {f.state}")
    if not f.video_metadata or not f.video_metadata.get("videoDuration"):
        fail(f"an ACTIVE video has no videoMetadata.videoDuration: {f.video_metadata!r}")
    print(f"active: {f.name} uri={f.uri} video_metadata={f.video_metadata}")

    # generateContent with the file and a text part.
    resp = client.models.generate_content(model="gemini-3.5-flash-lite", contents=[f, "Describe"])
    text = resp.text or ""
    print("answer:\n" + text)
    if sha_hex not in text:
        fail("the answer does not mention the file's sha256")
    u = resp.usage_metadata
    if not u or not u.prompt_token_count or not u.total_token_count:
        fail(f"usage metadata missing: {u}")
    print(f"usage: prompt={u.prompt_token_count} candidates={u.candidates_token_count} "
          f"thoughts={u.thoughts_token_count} total={u.total_token_count}")

    # Streaming (SSE).
    chunks = list(
        client.models.generate_content_stream(model="gemini-3.5-flash-lite", contents=[f, "Describe"])
    )
    streamed = "".join(c.text or "" for c in chunks)
    if streamed != text:
        fail(f"streamed text differs from the unary answer:\n{streamed!r}\n{text!r}")
    if not chunks[-1].usage_metadata or chunks[-1].usage_metadata.total_token_count != u.total_token_count:
        fail("the last streamed chunk lacks the full usage")
    print(f"stream: {len(chunks)} chunks, same text")

    # Structured output with a JSON schema.
    schema = {
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "passed": {"type": "boolean"},
            "steps": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["summary", "passed", "steps"],
    }
    resp = client.models.generate_content(
        model="gemini-3.5-flash-lite",
        contents=[f, "Report as JSON"],
        config=types.GenerateContentConfig(
            response_mime_type="application/json", response_json_schema=schema
        ),
    )
    obj = json.loads(resp.text)
    if sha_hex not in obj["summary"] or obj["passed"] is not True or not obj["steps"]:
        fail(f"JSON answer has the wrong shape: {obj}")
    if resp.parsed != obj:
        fail(f"the SDK parsed the JSON answer differently: {resp.parsed!r}")
    print(f"json: {obj}")

    # Inline image.
    png = media_dir / "login.png"
    if png.is_file():
        b = png.read_bytes()
        resp = client.models.generate_content(
            model="gemini-3.5-flash-lite",
            contents=[types.Part.from_bytes(data=b, mime_type="image/png"), "What is shown?"],
        )
        if hashlib.sha256(b).hexdigest() not in (resp.text or ""):
            fail("inline image hash missing from the answer")
        print("inline image: ok")

    # Errors the SDK must surface.
    bad = genai.Client(api_key="wrong-key", http_options=types.HttpOptions(base_url=url))
    try:
        bad.models.generate_content(model="gemini-3.5-flash-lite", contents="hi")
        fail("a bad key was accepted")
    except errors.ClientError as e:
        if e.code != 400 or "API_KEY_INVALID" not in str(e.details):
            fail(f"bad key answered {e.code} {e.details}")
        print(f"bad key: {e.code} {e.status}")
    try:
        client.models.generate_content(model="not-a-model", contents="hi")
        fail("an unknown model was accepted")
    except errors.ClientError as e:
        if e.code != 404:
            fail(f"unknown model answered {e.code}")
        print(f"unknown model: {e.code} {e.status}")

    # Clips of the same file, as Vaider's change-aware sampling sends them: frames at each
    # part's fps between its offsets, at the requested media resolution, and no audio tokens
    # (the recording has no sound track).
    def clip(start, end, fps):
        return types.Part(
            file_data=types.FileData(file_uri=f.uri, mime_type="video/webm"),
            video_metadata=types.VideoMetadata(start_offset=start, end_offset=end, fps=fps),
        )

    def video_tokens(resp):
        details = resp.usage_metadata.prompt_tokens_details or []
        return sum(d.token_count for d in details if d.modality.name == "VIDEO")

    # Per frame: Gemini 2.x 258 (66 at LOW); Gemini 3 70 at the default and at LOW.
    for model, per_frame, per_low_frame in (
        ("gemini-2.5-flash-lite", 258, 66),
        ("gemini-3.5-flash-lite", 70, 70),
    ):
        clipped = client.models.generate_content(
            model=model,
            contents=[clip("0s", "2s", 0.4995), clip("2.25s", "3.5s", 8.0), "Describe"],
        )
        if video_tokens(clipped) != (1 + 10) * per_frame:
            fail(f"clips on {model}: {video_tokens(clipped)} video tokens, expected 11 frames of {per_frame}")
        low = client.models.generate_content(
            model=model,
            contents=[clip("0s", "2s", 0.4995), "Describe"],
            config=types.GenerateContentConfig(media_resolution=types.MediaResolution.MEDIA_RESOLUTION_LOW),
        )
        if video_tokens(low) != per_low_frame:
            fail(f"low resolution on {model}: {video_tokens(low)} video tokens, expected {per_low_frame}")
        print(f"clips on {model}: {video_tokens(clipped)} video tokens; one frame at low resolution: {video_tokens(low)}")

    # Count tokens, list, delete.
    ct = client.models.count_tokens(model="gemini-3.5-flash-lite", contents=[f, "Describe"])
    if not ct.total_tokens:
        fail(f"count_tokens: {ct}")
    print(f"count_tokens: {ct.total_tokens}")
    names = [x.name for x in client.files.list()]
    if f.name not in names:
        fail(f"files.list does not show {f.name}: {names}")
    client.files.delete(name=f.name)
    try:
        client.files.get(name=f.name)
        fail("a deleted file is still served")
    except errors.ClientError as e:
        print(f"deleted file: {e.code} {e.status}")
    # Today's models only, listed page by page; a shut-down model is a 404.
    listed = [m.name for m in client.models.list(config={"page_size": 2})]
    want = [
        "models/gemini-3.5-flash",
        "models/gemini-3.5-flash-lite",
        "models/gemini-3.8-flash",
        "models/gemini-3.1-pro-preview",
        "models/gemini-2.5-flash-lite",
    ]
    if listed != want:
        fail(f"models.list gave {listed}")
    m = client.models.get(model="gemini-3.5-flash-lite")
    if m.input_token_limit is None or "generateContent" not in (m.supported_actions or []):
        fail(f"models.get gave {m}")
    try:
        client.models.generate_content(model="gemini-2.5-flash", contents="hi")
        fail("a shut-down model answered")
    except errors.ClientError as e:
        if e.code != 404 or "ListModels" not in (e.message or ""):
            fail(f"shut-down model: {e.code} {e.message}")
        print(f"shut-down model: {e.code} {e.status}")
    print(f"models: {len(listed)} over pages of 2")

    # The async client on the older /v1beta/ paths.
    async def async_pass() -> None:
        beta = genai.Client(
            api_key="test-gemini-key",
            http_options=types.HttpOptions(base_url=url, api_version="v1beta"),
        )
        g = await beta.aio.files.upload(file=str(video))
        while g.state.name == "PROCESSING":
            g = await beta.aio.files.get(name=g.name)
        if g.state.name != "ACTIVE":
            fail(f"async upload ended in {g.state}")
        r = await beta.aio.models.generate_content(
            model="gemini-2.5-flash-lite", contents=[g, "Describe"]
        )
        if sha_hex not in (r.text or ""):
            fail("async answer lacks the sha256")
        await beta.aio.files.delete(name=g.name)
        print("async client on v1beta: ok")

    asyncio.run(async_pass())
    print("SDK CHECK OK")


if __name__ == "__main__":
    main()
