"""One 50-turn conversation (chat, streamed every other turn) long enough to compact."""
from openai import OpenAI
import random
random.seed(3)
c = OpenAI(base_url="http://127.0.0.1:8787/v1", api_key="sk-long")
FILL = ("We walked through the service layout again, the queue consumers, the retry policy, "
        "the dashboards and the alert routes, and agreed the notes should stay in the wiki. ")
facts = {2: "Our production cluster is called atlas-7.", 5: "The on-call rotation changes every Tuesday.",
         8: "My staging API key prefix is stg_ and it rotates monthly.", 12: "The release budget for Q1 is 40000 dollars.",
         15: "From now on, always include a rollback plan in deploy notes.", 20: "Actually, the release budget for Q1 is 45000 dollars.",
         25: "We renamed the production cluster to boreas-2.", 30: "The database migration window is Sunday 02:00 UTC.",
         38: "Correction: the migration window moved to Saturday 23:00 UTC.", 44: "Which cluster is production and what is the Q1 budget?",
         47: "When is the migration window?"}
h = [{"role": "system", "content": "You are an SRE assistant."}]
for i in range(50):
    t = facts.get(i, f"Turn {i}: " + FILL * 3)
    h.append({"role": "user", "content": t})
    r = c.chat.completions.with_raw_response.create(model="gpt-4o", messages=h, extra_headers={"X-LCM-Session": "long1"})
    hd = r.headers
    if i in facts or i % 10 == 0:
        print(i, hd.get("x-lcm-memory"), "items", hd.get("x-lcm-injected-items"), "compacted", hd.get("x-lcm-compacted-messages"), hd.get("x-lcm-context"))
    h.append({"role": "assistant", "content": r.parse().choices[0].message.content})
