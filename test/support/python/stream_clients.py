"""Read Atrium's two event streams with Python clients; print what they saw as one JSON line.

    python3 stream_clients.py <base url> <api key> <workspace id>

/v1 through the official `openai` SDK (stream=True), /api/v1 through httpx-sse. Any exception
is reported (type and message) rather than raised, so the caller sees which client failed and how.
"""
import json
import sys

import httpx
from httpx_sse import connect_sse
from openai import OpenAI


def openai_stream(base, key, workspace):
    client = OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0)
    stream = client.chat.completions.create(
        model=f"workspace/{workspace}",
        messages=[{"role": "user", "content": "one two three"}],
        stream=True,
    )
    return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)


def httpx_sse_stream(base, key, workspace):
    events = []
    with httpx.Client(timeout=30) as client:
        with connect_sse(
            client,
            "POST",
            f"{base}/api/v1/chat/{workspace}/completions/stream",
            headers={"authorization": f"Bearer {key}"},
            json={"prompt": "four five six"},
        ) as source:
            for sse in source.iter_sse():
                events.append({"event": sse.event, "data": sse.json(), "retry": sse.retry})
    return events


def attempt(fn, *args):
    try:
        return {"ok": True, "value": fn(*args)}
    except Exception as e:  # noqa: BLE001 - reported to the test
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}


if __name__ == "__main__":
    base, key, workspace = sys.argv[1:4]
    print(json.dumps({"openai": attempt(openai_stream, base, key, workspace), "httpxSse": attempt(httpx_sse_stream, base, key, workspace)}))
