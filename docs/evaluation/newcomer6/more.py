"""Chat streamed tool call, /memory commands through anthropic and Responses streams,
X-LCM-Memory: off, X-LCM-User."""
import anthropic, openai, json
from openai import OpenAI
c = OpenAI(base_url="http://127.0.0.1:8787/v1", api_key="sk-team", max_retries=0)
tools=[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]
s = c.chat.completions.create(model="m", messages=[{"role":"user","content":"CALLTOOL weather please"}], tools=tools, stream=True, user="ana")
calls = {}
for ch in s:
    for d in (ch.choices[0].delta.tool_calls or []) if ch.choices else []:
        calls.setdefault(d.index, {"id": None, "name": "", "args": ""})
        if d.id: calls[d.index]["id"] = d.id
        if d.function and d.function.name: calls[d.index]["name"] += d.function.name
        if d.function and d.function.arguments: calls[d.index]["args"] += d.function.arguments
print("chat stream tool calls:", calls)
# commands via each API, streamed
a = anthropic.Anthropic(base_url="http://127.0.0.1:8787", api_key="sk-ant", max_retries=0)
with a.messages.stream(model="claude-sonnet-4-5", max_tokens=100, messages=[{"role":"user","content":"/memory status"}]) as st:
    m = st.get_final_message(); print("ant cmd stream:", m.content[0].text[:120].replace("\n"," | "), m.stop_reason)
m = a.messages.create(model="claude-sonnet-4-5", max_tokens=100, messages=[{"role":"user","content":"/memory search Oslo"}]); print("ant cmd:", m.content[0].text[:200].replace("\n"," | "))
with c.responses.stream(model="m", input="/memory prefs") as st:
    r = st.get_final_response(); print("resp cmd stream:", r.output_text[:120].replace("\n"," | "))
# X-LCM-Memory off / X-LCM-User
r = c.chat.completions.with_raw_response.create(model="m", messages=[{"role":"user","content":"Where do I live?"}], user="ana", extra_headers={"X-LCM-Memory":"off"})
print("off:", {k:v for k,v in r.headers.items() if k.startswith("x-lcm")})
r = c.chat.completions.with_raw_response.create(model="m", messages=[{"role":"user","content":"Which car do I drive?"}], extra_headers={"X-LCM-User":"ben"})
print("x-lcm-user:", {k:v for k,v in r.headers.items() if k.startswith("x-lcm")})
r = c.chat.completions.with_raw_response.create(model="m", messages=[{"role":"user","content":"Which car do I drive now?"}], user="ana", extra_headers={"X-LCM-User":"ben"})
print("both:", {k:v for k,v in r.headers.items() if k.startswith("x-lcm")})
