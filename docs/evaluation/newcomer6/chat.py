"""Chat session: two end users (user=ana|ben) behind one key, one group thread with speakers (name)."""
import sys
from openai import OpenAI
c = OpenAI(base_url="http://127.0.0.1:8787/v1", api_key="sk-team")
def run(user, turns, session=None, names=None, stream_every=2):
    hist = [{"role": "system", "content": "You are a helpful assistant."}]
    hdr = {"X-LCM-Session": session} if session else {}
    for i, t in enumerate(turns):
        m = {"role": "user", "content": t}
        if names: m["name"] = names[i % len(names)]
        hist.append(m)
        kw = dict(model="gpt-4o-mini", messages=hist, extra_headers=hdr)
        if user: kw["user"] = user
        if i % stream_every == 1:
            s = c.chat.completions.with_raw_response.create(stream=True, stream_options={"include_usage": True}, **kw)
            txt = "".join(ch.choices[0].delta.content or "" for ch in s.parse() if ch.choices)
            h = s.headers
        else:
            r = c.chat.completions.with_raw_response.create(**kw); h = r.headers; txt = r.parse().choices[0].message.content
        print(f"{user or '-'} {i:2d} {h.get('x-lcm-memory')} items={h.get('x-lcm-injected-items')} tok={h.get('x-lcm-injected-tokens')} | {t[:50]!r} -> {txt!r}")
        hist.append({"role": "assistant", "content": txt})
ANA = ["Hi, I'm Ana. I prefer short answers with bullet points.",
 "I live in Porto and I work as a data engineer.",
 "From now on, always show code in Python.",
 "Our warehouse runs on Snowflake.",
 "My cat is called Miso.",
 "I'm vegetarian.",
 "The quarterly report is due on March 3.",
 "Please never use emojis in answers.",
 "Actually, the report is due on March 10, not March 3.",
 "We switched the warehouse to BigQuery last week.",
 "My laptop budget is 1200 euros.",
 "Correction: my laptop budget is 1500 euros.",
 "I now eat fish too, so I'm pescatarian.",
 "What's a good lunch for me?",
 "Which warehouse do we use?",
 "When is the report due?",
 "Thanks!"]
BEN = ["Hello, I'm Ben, I live in Berlin.",
 "I prefer long, detailed explanations.",
 "I play golf on Sundays.",
 "My daughter Clara starts school in September.",
 "From now on, use metric units.",
 "I drive a Volvo.",
 "I sold the Volvo and bought a Tesla.",
 "What car do I drive?",
 "Where do I live?",
 "What's my cat's name?",
 "When is my report due?",
 "Bye."]
TEAM = ["Let's plan the offsite. I think Lisbon in May.",
 "I can't travel in May, June works for me.",
 "OK, then June in Lisbon. Budget is 20k euros.",
 "I prefer a hotel near the river.",
 "Decision: we go with the Myriad hotel.",
 "Budget got cut to 15k euros.",
 "What's our budget and where are we going?"]
run("ana", ANA[:9])
run("ben", BEN[:6])
run("ana", ANA[9:])
run("ben", BEN[6:])
run(None, TEAM, session="offsite", names=["maria", "joao", "rita"])
# fresh conversations
run("ana", ["What do you know about me?"], stream_every=9)
run("ben", ["What do you know about me?"], stream_every=9)
run(None, ["What's the offsite budget?"], session="offsite2", stream_every=9)
