"""Responses tools echo, a streamed /memory command, X-LCM-Timezone with an offset,
anthropic metadata.user_id as two end users."""
from openai import OpenAI
import anthropic, json
c = OpenAI(base_url="http://127.0.0.1:8787/v1", api_key="sk-resp", max_retries=0)
r = c.responses.create(model="m", input="What language do I want again?")
print("tools echoed:", [t.name for t in r.tools], "prev:", r.previous_response_id)
with c.responses.stream(model="m", input="And once more?", previous_response_id=r.id) as s:
    evs = [e for e in s]; fr = s.get_final_response()
print("stream tools:", [t.name for t in fr.tools], "prev:", fr.previous_response_id, [e.type for e in evs][:3])
cc = OpenAI(base_url="http://127.0.0.1:8787/v1", api_key="sk-team", max_retries=0)
s = cc.chat.completions.create(model="m", messages=[{"role":"user","content":"/memory status"}], stream=True, stream_options={"include_usage": True}, user="ben")
print("chat cmd stream:", "".join(ch.choices[0].delta.content or "" for ch in s if ch.choices)[:150].replace("\n"," | "))
r = cc.chat.completions.with_raw_response.create(model="m", messages=[{"role":"user","content":"I'm meeting Rui tomorrow."}], user="ben", extra_headers={"X-LCM-Timezone": "-08:00"})
print("tz:", {k:v for k,v in r.headers.items() if k.startswith("x-lcm")})
a = anthropic.Anthropic(base_url="http://127.0.0.1:8787", api_key="sk-ant2", max_retries=0)
for uid, text in [("eve", "I'm Eve and I live in Madrid."), ("finn", "I'm Finn and I live in Dublin."), ("eve", "Where do I live?"), ("finn", "Where do I live?")]:
    m = a.messages.with_raw_response.create(model="claude-sonnet-4-5", max_tokens=50, metadata={"user_id": uid}, messages=[{"role":"user","content":text}])
    print(uid, {k:v for k,v in m.headers.items() if k in ("x-lcm-memory","x-lcm-injected-items")})
