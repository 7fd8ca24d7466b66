"""A fake upstream for the newcomer's pass (docs/evaluation/README.md, "A newcomer's
pass, fifth round"): chat completions, Responses and Anthropic Messages, streamed
or not, in their real byte formats; every request (path, headers, raw body) is
appended to a JSONL file. A chat
turn "TOOLSEARCH: words" makes it call the memory_search tool (when offered) and
answer with the tool's result. Usage: python fake_upstream.py PORT LOG.jsonl"""
import json, sys, time, uuid, asyncio
from aiohttp import web

LOG = open(sys.argv[2], "a")
N = {"n": 0}

def log(request, raw):
    LOG.write(json.dumps({"path": request.path, "headers": dict(request.headers), "body": raw.decode("utf-8", "replace")}) + "\n"); LOG.flush()

def sse(obj, event=None):
    s = (f"event: {event}\n" if event else "") + "data: " + json.dumps(obj) + "\n\n"
    return s.encode()

async def chat(request):
    raw = await request.read(); log(request, raw); body = json.loads(raw)
    text = "Noted."
    last = body["messages"][-1]
    names = [t["function"]["name"] for t in body.get("tools", [])]
    if last["role"] == "tool":
        text = "TOOL RESULT: " + str(last["content"])
    elif "TOOLSEARCH:" in str(last.get("content")) and "memory_search" in names and not body.get("stream"):
        q = str(last["content"]).split("TOOLSEARCH:")[1].strip()
        return web.json_response({"id": "chatcmpl-t", "object": "chat.completion", "created": int(time.time()), "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "memory_search", "arguments": json.dumps({"query": q})}}]}, "finish_reason": "tool_calls", "logprobs": None}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})
    cid = "chatcmpl-" + uuid.uuid4().hex[:12]
    if body.get("stream"):
        r = web.StreamResponse(headers={"content-type": "text/event-stream"}); await r.prepare(request)
        for i, piece in enumerate(["Not", "ed."]):
            await r.write(sse({"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": body["model"], "choices": [{"index": 0, "delta": ({"role": "assistant"} if i == 0 else {}) | {"content": piece}, "finish_reason": None}]}))
        await r.write(sse({"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": body["model"], "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}))
        await r.write(b"data: [DONE]\n\n"); return r
    return web.json_response({"id": cid, "object": "chat.completion", "created": int(time.time()), "model": body["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop", "logprobs": None}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})

def client_tools(tools):
    return [t for t in tools or [] if not t.get("name", "").startswith("memory")]

async def messages(request):
    raw = await request.read(); log(request, raw); body = json.loads(raw)
    last = body["messages"][-1]
    content = last["content"] if isinstance(last["content"], list) else [{"type": "text", "text": last["content"]}]
    ask_tool = not any(b.get("type") == "tool_result" for b in content) and any(b.get("type") == "text" and "RUN:" in b.get("text", "") for b in content)
    tools = client_tools(body.get("tools"))
    mid = "msg_" + uuid.uuid4().hex[:12]
    if ask_tool and tools:
        cmd = [b["text"] for b in content if b.get("type") == "text" and "RUN:" in b["text"]][0].split("RUN:")[1].split("\n")[0].strip()
        blocks = [{"type": "text", "text": "Running it."}, {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:12], "name": tools[0]["name"], "input": {"command": cmd}}]
        stop = "tool_use"
    else:
        blocks = [{"type": "text", "text": "Done."}]; stop = "end_turn"
    msg = {"id": mid, "type": "message", "role": "assistant", "model": body["model"], "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 20, "output_tokens": 5}}
    if not body.get("stream"):
        return web.json_response(msg)
    r = web.StreamResponse(headers={"content-type": "text/event-stream"}); await r.prepare(request)
    start = dict(msg, content=[], stop_reason=None, usage={"input_tokens": 20, "output_tokens": 1})
    await r.write(sse({"type": "message_start", "message": start}, "message_start"))
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            await r.write(sse({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}, "content_block_start"))
            await r.write(sse({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}}, "content_block_delta"))
        else:
            await r.write(sse({"type": "content_block_start", "index": i, "content_block": dict(b, input={})}, "content_block_start"))
            await r.write(sse({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}}, "content_block_delta"))
        await r.write(sse({"type": "content_block_stop", "index": i}, "content_block_stop"))
    await r.write(sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}, "message_delta"))
    await r.write(sse({"type": "message_stop"}, "message_stop")); return r

async def responses(request):
    raw = await request.read(); log(request, raw); body = json.loads(raw)
    inp = body.get("input"); items = inp if isinstance(inp, list) else [{"role": "user", "content": inp}]
    last = items[-1]
    tools = [t for t in body.get("tools") or [] if t.get("type") == "function" and not t.get("name", "").startswith("memory")]
    rid = "resp_" + uuid.uuid4().hex[:12]
    if last.get("type") != "function_call_output" and tools and "weather" in json.dumps(last).lower():
        out = [{"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:8], "call_id": "call_" + uuid.uuid4().hex[:8], "name": tools[0]["name"], "arguments": json.dumps({"city": "Lisbon"}), "status": "completed"}]
    else:
        out = [{"type": "message", "id": "msg_" + uuid.uuid4().hex[:8], "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "It is sunny.", "annotations": []}]}]
    resp = {"id": rid, "object": "response", "created_at": int(time.time()), "status": "completed", "model": body["model"], "output": out,
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": body.get("tools") or [], "store": body.get("store", True),
            "usage": {"input_tokens": 10, "output_tokens": 3, "total_tokens": 13, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}
    if not body.get("stream"):
        return web.json_response(resp)
    r = web.StreamResponse(headers={"content-type": "text/event-stream"}); await r.prepare(request)
    seq = 0
    await r.write(sse({"type": "response.created", "sequence_number": seq, "response": dict(resp, status="in_progress", output=[])}, "response.created"))
    for i, it in enumerate(out):
        seq += 1; await r.write(sse({"type": "response.output_item.added", "sequence_number": seq, "output_index": i, "item": it}, "response.output_item.added"))
        seq += 1; await r.write(sse({"type": "response.output_item.done", "sequence_number": seq, "output_index": i, "item": it}, "response.output_item.done"))
    seq += 1; await r.write(sse({"type": "response.completed", "sequence_number": seq, "response": resp}, "response.completed"))
    return r

app = web.Application(client_max_size=64 * 2**20)
app.router.add_post("/v1/chat/completions", chat)
app.router.add_post("/v1/messages", messages)
app.router.add_post("/v1/responses", responses)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None)
