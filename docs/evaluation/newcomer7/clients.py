"""Responses (stream and not, previous_response_id), openai-agents with a function tool over
three turns, anthropic messages stream with tool use, as one end user 'cara'."""
import asyncio, json, os
os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
from openai import OpenAI, AsyncOpenAI
import anthropic
B = os.environ.get("LCM_URL", "http://127.0.0.1:8787")
c = OpenAI(base_url=B + "/v1", api_key="sk-cl7")
h = {"X-LCM-Session": "resp7", "X-LCM-User": "cara"}
r1 = c.responses.create(model="gpt-4o", input="Goal: add OAuth login to the admin panel. Ground rules: always use PKCE, never store tokens in localStorage.", extra_headers=h)
print("resp1", r1.id, r1.output_text[:40])
r2 = c.responses.create(model="gpt-4o", input="Step 1: register the client. Step 2: wire the callback. Step 3: add logout.", previous_response_id=r1.id, extra_headers=h)
s = c.responses.create(model="gpt-4o", input="Step 1 done. What's left?", previous_response_id=r2.id, stream=True, extra_headers=h)
txt = "".join(e.delta for e in s if e.type == "response.output_text.delta"); print("resp3 stream", txt[:40])
# agents
from agents import Agent, Runner, function_tool, set_default_openai_client, set_default_openai_api
@function_tool
def run_tests(path: str) -> str:
    """Run the test suite at path."""
    return f"12 passed in {path}"
set_default_openai_client(AsyncOpenAI(base_url=B + "/v1", api_key="sk-cl7", default_headers={"X-LCM-User": "cara", "X-LCM-Session": "agents7"}))
ag = Agent(name="coder", instructions="You are a coding agent.", tools=[run_tests])
async def go():
    res = await Runner.run(ag, "CALLTOOL run the tests in tests/auth. I prefer pytest -x for quick runs.")
    print("agents1", res.final_output[:60])
    res = await Runner.run(ag, res.to_input_list() + [{"role": "user", "content": "Blocked on the callback: the IdP rejects localhost."}])
    print("agents2", res.final_output[:60])
    res = await Runner.run(ag, res.to_input_list() + [{"role": "user", "content": "What am I blocked on?"}])
    print("agents3", res.final_output[:60])
asyncio.run(go())
# anthropic
a = anthropic.Anthropic(base_url=B, api_key="sk-cl7", default_headers={"X-LCM-User": "cara", "X-LCM-Session": "anth7"})
tools = [{"name": "read_file", "description": "Read a file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]
msgs = [{"role": "user", "content": "CALLTOOL read auth.py. Our IdP is Keycloak 24."}]
with a.messages.stream(model="claude-sonnet-4-5", max_tokens=300, messages=msgs, tools=tools) as st:
    final = st.get_final_message()
print("anth1", [b.type for b in final.content])
tu = [b for b in final.content if b.type == "tool_use"][0]
msgs += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in final.content]},
         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tu.id, "content": "def login(): ..."}]}]
with a.messages.stream(model="claude-sonnet-4-5", max_tokens=300, messages=msgs, tools=tools) as st:
    final = st.get_final_message()
print("anth2", [b.type for b in final.content], final.content[0].text[:40] if final.content[0].type == "text" else "")
msgs += [{"role": "assistant", "content": final.content[0].text}, {"role": "user", "content": "Which IdP do we use, and any rules?"}]
m = a.messages.create(model="claude-sonnet-4-5", max_tokens=300, messages=msgs)
print("anth3", m.content[0].text[:40])
