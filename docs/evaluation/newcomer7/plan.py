"""Say each argument as the next user turn of one chat session (argv[1]) through the proxy."""
import os, sys
from openai import OpenAI
c = OpenAI(base_url=os.environ.get("LCM_URL", "http://127.0.0.1:8787") + "/v1", api_key="sk-plan7")
S = sys.argv[1]
h = []
for t in sys.argv[2:]:
    h.append({"role": "user", "content": t.replace("\\n", "\n")})
    r = c.chat.completions.create(model="gpt-4o", messages=h, extra_headers={"X-LCM-Session": S})
    h.append({"role": "assistant", "content": r.choices[0].message.content})
