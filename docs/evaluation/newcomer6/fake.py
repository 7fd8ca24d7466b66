"""Loopback fake upstream: Chat Completions, Responses, Anthropic Messages, streamed or not,
real byte formats. Logs each request (path, headers, body) as JSONL. Triggers in the newest
user text: CALLTOOL (call the client's first tool), ERR429 (rate-limit error in the API's shape),
THINK (anthropic thinking block)."""
import json, sys, time, uuid
from aiohttp import web
LOG = open(sys.argv[2], "a")
def log(req, raw):
    LOG.write(json.dumps({"path": req.path, "headers": dict(req.headers), "body": raw.decode("utf-8", "replace")}) + "\n"); LOG.flush()
def sse(obj, event=None):
    return ((f"event: {event}\n" if event else "") + "data: " + json.dumps(obj) + "\n\n").encode()
def text_of(c):
    if isinstance(c, str): return c
    return " ".join(p.get("text", "") for p in c or [] if isinstance(p, dict))
def ctools(tools, key="name"):
    out = []
    for t in tools or []:
        n = t.get("function", {}).get("name") if "function" in t else t.get("name", "")
        if n and not n.startswith("memory"): out.append(n)
    return out
def err429(kind):
    if kind == "anthropic":
        return web.json_response({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}, status=429, headers={"retry-after": "7", "request-id": "req_up1"})
    return web.json_response({"error": {"message": "slow down", "type": "requests", "param": None, "code": "rate_limit_exceeded"}}, status=429, headers={"retry-after": "7", "x-request-id": "req_up1"})

async def chat(req):
    raw = await req.read(); log(req, raw); b = json.loads(raw)
    last = b["messages"][-1]; lt = text_of(last.get("content"))
    if "ERR429" in lt: return err429("openai")
    tools = ctools(b.get("tools")); cid = "chatcmpl-" + uuid.uuid4().hex[:10]; now = int(time.time())
    call = None
    if last["role"] == "user" and "CALLTOOL" in lt and tools:
        call = {"id": "call_" + uuid.uuid4().hex[:8], "type": "function", "function": {"name": tools[0], "arguments": json.dumps({"city": "Lisbon"})}}
    text = None if call else ("Tool said: " + lt if last["role"] == "tool" else "Noted.")
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    if not b.get("stream"):
        msg = {"role": "assistant", "content": text, "refusal": None}
        if call: msg["tool_calls"] = [call]
        return web.json_response({"id": cid, "object": "chat.completion", "created": now, "model": b["model"], "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if call else "stop", "logprobs": None}], "usage": usage})
    r = web.StreamResponse(headers={"content-type": "text/event-stream"}); await r.prepare(req)
    base = {"id": cid, "object": "chat.completion.chunk", "created": now, "model": b["model"]}
    await r.write(sse(base | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}))
    if call:
        await r.write(sse(base | {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"], "arguments": ""}}]}, "finish_reason": None}]}))
        a = call["function"]["arguments"]
        for piece in (a[:5], a[5:]):
            await r.write(sse(base | {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}, "finish_reason": None}]}))
    else:
        for piece in (text[:3], text[3:]):
            await r.write(sse(base | {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}))
    await r.write(sse(base | {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if call else "stop"}]}))
    if (b.get("stream_options") or {}).get("include_usage"):
        await r.write(sse(base | {"choices": [], "usage": usage}))
    await r.write(b"data: [DONE]\n\n"); return r

async def messages(req):
    raw = await req.read(); log(req, raw); b = json.loads(raw)
    last = b["messages"][-1]
    content = last["content"] if isinstance(last["content"], list) else [{"type": "text", "text": last["content"]}]
    lt = " ".join(x.get("text", "") for x in content if x.get("type") == "text")
    if "ERR429" in lt: return err429("anthropic")
    has_result = any(x.get("type") == "tool_result" for x in content)
    tools = ctools(b.get("tools")); mid = "msg_" + uuid.uuid4().hex[:10]
    blocks = []
    if b.get("thinking", {}).get("type") == "enabled":
        blocks.append({"type": "thinking", "thinking": "Let me think about it.", "signature": "sig_" + uuid.uuid4().hex})
    if "CALLTOOL" in lt and tools and not has_result:
        blocks += [{"type": "text", "text": "Checking."}, {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:10], "name": tools[0], "input": {"city": "Lisbon"}}]; stop = "tool_use"
    else:
        blocks.append({"type": "text", "text": "Done." if not has_result else "Result received."}); stop = "end_turn"
    msg = {"id": mid, "type": "message", "role": "assistant", "model": b["model"], "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 20, "output_tokens": 5}}
    if not b.get("stream"): return web.json_response(msg)
    r = web.StreamResponse(headers={"content-type": "text/event-stream"}); await r.prepare(req)
    await r.write(sse({"type": "message_start", "message": dict(msg, content=[], stop_reason=None, usage={"input_tokens": 20, "output_tokens": 1})}, "message_start"))
    for i, x in enumerate(blocks):
        if x["type"] == "thinking":
            await r.write(sse({"type": "content_block_start", "index": i, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}, "content_block_start"))
            await r.write(sse({"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": x["thinking"]}}, "content_block_delta"))
            await r.write(sse({"type": "content_block_delta", "index": i, "delta": {"type": "signature_delta", "signature": x["signature"]}}, "content_block_delta"))
        elif x["type"] == "text":
            await r.write(sse({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}, "content_block_start"))
            await r.write(sse({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": x["text"]}}, "content_block_delta"))
        else:
            await r.write(sse({"type": "content_block_start", "index": i, "content_block": dict(x, input={})}, "content_block_start"))
            await r.write(sse({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": json.dumps(x["input"])}}, "content_block_delta"))
        await r.write(sse({"type": "content_block_stop", "index": i}, "content_block_stop"))
    await r.write(sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}, "message_delta"))
    await r.write(sse({"type": "message_stop"}, "message_stop")); return r

async def responses(req):
    raw = await req.read(); log(req, raw); b = json.loads(raw)
    inp = b.get("input"); items = inp if isinstance(inp, list) else [{"role": "user", "content": inp}]
    last = items[-1]; lt = json.dumps(last)
    if "ERR429" in lt: return err429("openai")
    tools = [t["name"] for t in b.get("tools") or [] if t.get("type") == "function" and not t.get("name", "").startswith("memory")]
    rid = "resp_" + uuid.uuid4().hex[:10]
    if last.get("type") != "function_call_output" and tools and "CALLTOOL" in lt:
        out = [{"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:8], "call_id": "call_" + uuid.uuid4().hex[:8], "name": tools[0], "arguments": json.dumps({"city": "Lisbon"}), "status": "completed"}]
    else:
        out = [{"type": "message", "id": "msg_" + uuid.uuid4().hex[:8], "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "It is sunny.", "annotations": []}]}]
    resp = {"id": rid, "object": "response", "created_at": int(time.time()), "status": "completed", "model": b["model"], "output": out, "parallel_tool_calls": True, "tool_choice": "auto", "tools": b.get("tools") or [], "store": b.get("store", True), "previous_response_id": b.get("previous_response_id"),
            "usage": {"input_tokens": 10, "output_tokens": 3, "total_tokens": 13, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}
    if not b.get("stream"): return web.json_response(resp)
    r = web.StreamResponse(headers={"content-type": "text/event-stream"}); await r.prepare(req)
    seq = 0
    async def ev(o):
        nonlocal seq; o["sequence_number"] = seq; seq += 1; await r.write(sse(o, o["type"]))
    await ev({"type": "response.created", "response": dict(resp, status="in_progress", output=[])})
    for i, it in enumerate(out):
        if it["type"] == "message":
            await ev({"type": "response.output_item.added", "output_index": i, "item": dict(it, content=[], status="in_progress")})
            await ev({"type": "response.content_part.added", "output_index": i, "item_id": it["id"], "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}})
            await ev({"type": "response.output_text.delta", "output_index": i, "item_id": it["id"], "content_index": 0, "delta": "It is sunny."})
            await ev({"type": "response.output_text.done", "output_index": i, "item_id": it["id"], "content_index": 0, "text": "It is sunny."})
            await ev({"type": "response.content_part.done", "output_index": i, "item_id": it["id"], "content_index": 0, "part": it["content"][0]})
        else:
            await ev({"type": "response.output_item.added", "output_index": i, "item": dict(it, arguments="", status="in_progress")})
            await ev({"type": "response.function_call_arguments.delta", "output_index": i, "item_id": it["id"], "delta": it["arguments"]})
            await ev({"type": "response.function_call_arguments.done", "output_index": i, "item_id": it["id"], "arguments": it["arguments"]})
        await ev({"type": "response.output_item.done", "output_index": i, "item": it})
    await ev({"type": "response.completed", "response": resp})
    return r

app = web.Application(client_max_size=64 * 2**20)
app.router.add_post("/v1/chat/completions", chat); app.router.add_post("/v1/messages", messages); app.router.add_post("/v1/responses", responses)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None)
