"""Responses (openai SDK, stream and not, previous_response_id), openai-agents (Agent +
function tool, Responses and Chat models), anthropic (streamed tool use with thinking),
and 429s in each API's shape, through a proxy on 127.0.0.1:8787 in front of fake.py."""
import os, json, asyncio
os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
import openai, anthropic
from openai import OpenAI, AsyncOpenAI
c = OpenAI(base_url="http://127.0.0.1:8787/v1", api_key="sk-resp", max_retries=0)
print("== responses")
r = c.responses.with_raw_response.create(model="gpt-4o-mini", input="I'm Carla and I always want answers in Spanish.", extra_headers={"X-LCM-Session": "r1"})
print(dict((k, v) for k, v in r.headers.items() if k.startswith("x-lcm")), r.parse().output_text)
r2 = c.responses.create(model="gpt-4o-mini", input="What language do I want?", previous_response_id=r.parse().id)
print(r2.output_text, r2.id)
with c.responses.stream(model="gpt-4o-mini", input="Streamed: my timezone is Europe/Madrid.", previous_response_id=r2.id) as s:
    for e in s: pass
    fr = s.get_final_response(); print("stream", fr.output_text, fr.id)
try:
    c.responses.create(model="gpt-4o-mini", input="ERR429 please")
except openai.RateLimitError as e:
    print("429 ok", e.status_code, e.body, e.response.headers.get("retry-after"))
try:
    c.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "ERR429"}], stream=True)
except openai.RateLimitError as e:
    print("chat 429 ok", e.body)
print("== agents")
from agents import Agent, Runner, function_tool, set_default_openai_client, set_default_openai_api
set_default_openai_client(AsyncOpenAI(base_url="http://127.0.0.1:8787/v1", api_key="sk-agents", max_retries=0)); set_default_openai_api("responses")
@function_tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"Sunny in {city}"
agent = Agent(name="helper", instructions="Be brief.", tools=[get_weather], model="gpt-4o-mini")
async def agents_main():
    items = []
    for q in ["I live in Lisbon. From now on, always use Celsius.", "CALLTOOL what's the weather?", "Thanks. CALLTOOL again please"]:
        res = await Runner.run(agent, items + [{"role": "user", "content": q}])
        items = res.to_input_list(); print(q, "->", res.final_output)
    s = Runner.run_streamed(agent, items + [{"role": "user", "content": "CALLTOOL streamed"}])
    async for _ in s.stream_events(): pass
    print("streamed ->", s.final_output)
    # chat completions model too
    from agents import OpenAIChatCompletionsModel
    a2 = Agent(name="chat", instructions="Be brief.", tools=[get_weather], model=OpenAIChatCompletionsModel("gpt-4o-mini", AsyncOpenAI(base_url="http://127.0.0.1:8787/v1", api_key="sk-agents")))
    res = await Runner.run(a2, "CALLTOOL weather via chat"); print("chat agent ->", res.final_output)
asyncio.run(agents_main())
print("== anthropic")
a = anthropic.Anthropic(base_url="http://127.0.0.1:8787", api_key="sk-ant", max_retries=0)
tools = [{"name": "get_weather", "description": "weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
msgs = [{"role": "user", "content": "I'm Dan. I prefer terse replies. CALLTOOL weather?"}]
with a.messages.stream(model="claude-sonnet-4-5", max_tokens=2000, thinking={"type": "enabled", "budget_tokens": 1024}, tools=tools, messages=msgs, extra_headers={"X-LCM-Session": "ant1"}) as s:
    final = s.get_final_message()
print([b.type for b in final.content], final.stop_reason)
msgs.append({"role": "assistant", "content": final.content})
tu = [b for b in final.content if b.type == "tool_use"][0]
msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": tu.id, "content": "Sunny"}]})
with a.messages.stream(model="claude-sonnet-4-5", max_tokens=2000, thinking={"type": "enabled", "budget_tokens": 1024}, tools=tools, messages=msgs, extra_headers={"X-LCM-Session": "ant1"}) as s:
    final2 = s.get_final_message()
print([b.type for b in final2.content], final2.content[-1].text)
msgs.append({"role": "assistant", "content": final2.content}); msgs.append({"role": "user", "content": "Actually I'm in Oslo now, not Lisbon."})
m = a.messages.with_raw_response.create(model="claude-sonnet-4-5", max_tokens=2000, thinking={"type": "enabled", "budget_tokens": 1024}, tools=tools, messages=msgs, extra_headers={"X-LCM-Session": "ant1"})
print({k: v for k, v in m.headers.items() if k.startswith("x-lcm")}, [b.type for b in m.parse().content])
try:
    a.messages.create(model="claude-sonnet-4-5", max_tokens=10, messages=[{"role": "user", "content": "ERR429"}])
except anthropic.RateLimitError as e:
    print("ant 429 ok", e.body, e.response.headers.get("retry-after"))
try:
    with a.messages.stream(model="claude-sonnet-4-5", max_tokens=10, messages=[{"role": "user", "content": "ERR429"}]) as s: s.get_final_message()
except anthropic.RateLimitError as e:
    print("ant stream 429 ok", e.body)
print(a.messages.count_tokens(model="claude-sonnet-4-5", messages=[{"role": "user", "content": "hi"}]) if False else "")
