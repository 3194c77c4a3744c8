"""Run a tool round trip through Atrium's /v1 with Python clients; print what they saw as one JSON line.

    python3 tool_clients.py <base url> <api key> <model id>

The stand-in behind the model answers a request offering tools with a `get_weather` call and a
request ending in a tool result with `Tool said: <result>`. Each client: the request with tools,
streamed (every chunk read), then the follow-up with the call and its result, streamed.
- `openai`: the raw stream (tool-call deltas accumulated by hand) and the SDK's streaming helper.
- `langchain`: ChatOpenAI with `bind_tools`, streamed, chunks added up as LangChain does.
Any exception is reported (type and message) rather than raised; a client that is not installed
is reported as missing.
"""
import json
import sys

TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
QUESTION = [{"role": "user", "content": "Weather in Paris?"}]


def openai_round_trip(base, key, model):
    from openai import OpenAI

    client = OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0)
    # raw stream: the deltas by index, as OpenAI sends them
    calls = {}
    finish = None
    chunks = 0
    for chunk in client.chat.completions.create(model=model, messages=QUESTION, tools=[TOOL], stream=True):
        chunks += 1
        for choice in chunk.choices:
            for d in choice.delta.tool_calls or []:
                c = calls.setdefault(d.index, {"id": None, "name": None, "arguments": "", "pieces": 0})
                c["pieces"] += 1
                if d.id:
                    c["id"] = d.id
                if d.function and d.function.name:
                    c["name"] = d.function.name
                if d.function and d.function.arguments:
                    c["arguments"] += d.function.arguments
            finish = choice.finish_reason or finish
    raw = [calls[i] for i in sorted(calls)]
    # the SDK's helper accumulates the same deltas into the message
    with client.chat.completions.stream(model=model, messages=QUESTION, tools=[TOOL]) as stream:
        final = stream.get_final_completion()
    message = final.choices[0].message
    call = message.tool_calls[0]
    follow_up = QUESTION + [
        {"role": "assistant", "content": None, "tool_calls": [call.model_dump(include={"id", "type", "function"})]},
        {"role": "tool", "tool_call_id": call.id, "content": '{"temp": 21}'},
    ]
    text = "".join(
        c.choices[0].delta.content or ""
        for c in client.chat.completions.create(model=model, messages=follow_up, tools=[TOOL], stream=True)
        if c.choices
    )
    return {
        "chunks": chunks,
        "raw": raw,
        "rawFinish": finish,
        "helper": {"finish": final.choices[0].finish_reason, "name": call.function.name, "arguments": json.loads(call.function.arguments)},
        "text": text,
    }


def langchain_round_trip(base, key, model):
    from langchain_core.messages import HumanMessage, ToolMessage
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model=model, base_url=f"{base}/v1", api_key=key, max_retries=0, streaming=True).bind_tools([TOOL])
    question = [HumanMessage("Weather in Paris?")]
    total = None
    chunks = 0
    for chunk in llm.stream(question):
        chunks += 1
        total = chunk if total is None else total + chunk
    calls = [{"name": c["name"], "args": c["args"], "id": c["id"]} for c in total.tool_calls]
    follow_up = question + [total, ToolMessage('{"temp": 21}', tool_call_id=calls[0]["id"])]
    text = "".join(c.content for c in llm.stream(follow_up) if isinstance(c.content, str))
    return {"chunks": chunks, "calls": calls, "finish": total.response_metadata.get("finish_reason"), "text": text}


def attempt(fn, *args):
    try:
        return {"ok": True, "value": fn(*args)}
    except ImportError as e:
        return {"ok": False, "missing": True, "error": f"{type(e).__name__}: {e}"}
    except Exception as e:  # noqa: BLE001 - reported to the test
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}


if __name__ == "__main__":
    base, key, model = sys.argv[1:4]
    print(json.dumps({"openai": attempt(openai_round_trip, base, key, model), "langchain": attempt(langchain_round_trip, base, key, model)}))
