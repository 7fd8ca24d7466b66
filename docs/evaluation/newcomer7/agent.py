"""A 44-turn coding-agent-like chat conversation: goal, numbered steps, progress, blockers,
rules, corrections without "actually", speakers (name), two end users (user)."""
import os, sys
from openai import OpenAI
c = OpenAI(base_url=os.environ.get("LCM_URL", "http://127.0.0.1:8787") + "/v1", api_key="sk-agent7")
turns = [
 ("ana", None, "Goal: migrate the billing service from Flask to FastAPI without downtime."),
 ("ana", None, "Plan:\n1. Inventory the Flask routes.\n2. Port the models to Pydantic.\n3. Port the handlers.\n4. Add contract tests.\n5. Switch traffic with a canary."),
 ("ana", None, "Ground rules: always run ruff before committing, and never push directly to main."),
 ("ana", None, "I prefer type hints on every public function."),
 ("ana", None, "The billing database is Postgres 14 on db-billing-1."),
 ("ana", None, "Step 1 done: there are 42 routes."),
 ("ana", None, "Let's use httpx for the outbound calls."),
 ("ana", None, "What's next?"),
 ("ana", "maria", "I'm Maria from QA. The contract tests should use schemathesis."),
 ("ana", "joao", "Joao here: the canary should start at 5% of traffic."),
 ("ana", None, "Step 2 done."),
 ("ana", None, "Blocked on step 3: the payments handler depends on a legacy SOAP client."),
 ("ana", None, "The billing database is Postgres 16 on db-billing-2, not 14."),
 ("ana", None, "Always write the changelog entry in the same PR."),
 ("ana", "joao", "Make the canary 10%, 5% is too little to see errors."),
 ("ana", None, "The SOAP client is unblocked: we wrapped it with zeep."),
 ("ana", None, "Step 3 done."),
 ("ana", None, "Where are we on the plan, and which database do we target?"),
 ("ana", None, "We're dropping httpx, use aiohttp for the outbound calls instead."),
 ("ana", None, "From now on, use tabs? No, scratch that: keep 4-space indentation."),
 ("ana", None, "The deadline for the migration is Friday."),
 ("ana", None, "The deadline moved to next Wednesday."),
 ("ana", "maria", "Contract tests are at 80% coverage."),
 ("ana", None, "Step 4 done."),
 ("ana", None, "What's the canary percentage and which HTTP client do we use?"),
 ("ben", None, "Goal: write a CLI to resize images in bulk."),
 ("ben", None, "Steps: 1) parse args 2) walk the folder 3) resize with Pillow 4) write a report."),
 ("ben", None, "I prefer click over argparse."),
 ("ben", None, "Step 1 done."),
 ("ben", None, "What's next for me?"),
 ("ana", None, "Rules for this repo: use pytest, no unittest; keep functions under 50 lines."),
 ("ana", None, "Step 5 is blocked on the load balancer config from ops."),
 ("ana", None, "My API token for staging is sk-live-abcdef1234567890abcdef."),
 ("ana", None, "Ops sent the load balancer config, step 5 unblocked."),
 ("ana", None, "Step 5 done. The migration is complete."),
 ("ana", None, "Summarize the status of the migration and the rules I gave you."),
 ("ben", None, "Step 2 done, the walker skips hidden files."),
 ("ben", None, "What did I say about the CLI library and where am I in my steps?"),
]
hist = {}
for i, (user, name, text) in enumerate(turns):
    h = hist.setdefault(user, [{"role": "system", "content": "You are a coding agent."}])
    m = {"role": "user", "content": text}
    if name: m["name"] = name
    h.append(m)
    stream = i % 3 == 1
    if stream:
        r = c.chat.completions.with_raw_response.create(model="gpt-4o", messages=h, user=user, stream=True,
                                                         extra_headers={"X-LCM-Session": "mig-" + user})
        txt = "".join((ch.choices[0].delta.content or "") for ch in r.parse() if ch.choices)
    else:
        r = c.chat.completions.with_raw_response.create(model="gpt-4o", messages=h, user=user,
                                                         extra_headers={"X-LCM-Session": "mig-" + user})
        txt = r.parse().choices[0].message.content
    hd = r.headers
    print(i, user, hd.get("x-lcm-memory"), "items", hd.get("x-lcm-injected-items"), "tok", hd.get("x-lcm-injected-tokens"), "|", txt[:60].replace("\n", " "))
    h.append({"role": "assistant", "content": txt})
