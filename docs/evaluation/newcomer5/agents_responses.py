"""Session 3 of the newcomer's pass: the openai-agents SDK (Agent + Runner, one
function tool, store=False) on the Responses API; a proxy on 127.0.0.1:8787 in
front of fake_upstream.py."""
import asyncio, os
os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
from openai import AsyncOpenAI
from agents import Agent, Runner, function_tool, set_default_openai_client, set_default_openai_api, ModelSettings
set_default_openai_client(AsyncOpenAI(base_url="http://127.0.0.1:8787/v1", api_key="sk-agents"))
set_default_openai_api("responses")
@function_tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"Sunny, 21C in {city}"
agent = Agent(name="helper", instructions="Be brief.", tools=[get_weather], model="gpt-4o-mini", model_settings=ModelSettings(store=False))
async def main():
    items = []
    for q in ["I live in Lisbon and prefer Celsius.", "What's the weather where I live?", "From now on, always answer in one sentence.", "And the weather again?"]:
        r = await Runner.run(agent, items + [{"role": "user", "content": q}])
        items = r.to_input_list(); print(q, "->", r.final_output)
    s = Runner.run_streamed(agent, items + [{"role": "user", "content": "Weather once more, streamed?"}])
    async for _ in s.stream_events(): pass
    print("streamed ->", s.final_output)
asyncio.run(main())
