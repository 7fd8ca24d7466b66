"""Print the newest user message (memory block included) of chosen chat requests in the fake upstream's log.
Usage: python blocks.py up.jsonl [INDEX ...]"""
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
sel = sys.argv[2:] 
for i, r in enumerate(rows):
    if sel and str(i) not in sel: continue
    b = json.loads(r["body"])
    if r["path"].endswith("chat/completions"):
        m = [x for x in b["messages"] if x["role"] == "user"][-1]; t = m["content"]
        print(f"=== {i} {r['path']} user={b.get('user')} tools={[t_['function']['name'] for t_ in b.get('tools',[])]}")
        print(t if isinstance(t, str) else json.dumps(t))
