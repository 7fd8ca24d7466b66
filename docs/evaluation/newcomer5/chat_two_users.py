"""Session 1 of the newcomer's pass: 60 turns of a personal assistant, two end
users (`user`: ana, ben) behind one key, through the openai SDK; a proxy on
127.0.0.1:8787 in front of fake_upstream.py."""
import sys
from openai import OpenAI
c = OpenAI(base_url="http://127.0.0.1:8787/v1", api_key="sk-team-app")
A = [
 "Hi! I'm Ana. I prefer short answers, bullet points please.",
 "I live in Porto and work as a backend engineer.",
 "From now on, always give me code examples in Python.",
 "My favourite editor is Neovim.",
 "Our team uses Postgres 14 for the main database.",
 "What's a good way to structure a FastAPI project?",
 "Please never suggest MongoDB to me.",
 "My daughter's name is Lia, she is 6.",
 "I'm allergic to peanuts, keep that in mind for recipes.",
 "Can you suggest a quick dinner?",
 "We deploy on Fridays at 16:00.",
 "My budget for the new laptop is 1500 euros.",
 "I moved to Lisbon last month.",
 "We now use Postgres 16.",
 "Deploys are on Thursdays now.",
 "Where do I live?",
 "Which Postgres version do we use?",
 "What's my laptop budget?",
 "My budget went up to 1800 euros.",
 "Remind me what I told you about my daughter.",
 "From now on, answer in Portuguese when I write in Portuguese.",
 "Qual é a minha cidade?",
 "I switched from Neovim to Helix.",
 "Which editor do I use?",
 "What day do we deploy?",
 "Thanks, that's all for now.",
 "Oh, my manager is called Rui.",
 "Rui wants weekly status reports every Monday.",
 "What should go in my weekly report?",
 "Who is my manager?",
]
B = [
 "Hello, I'm Ben. I like detailed explanations with examples.",
 "I live in Berlin.",
 "From now on, use metric units only.",
 "I drive a 2019 Golf.",
 "I'm vegetarian.",
 "Suggest a weekend trip from Berlin.",
 "We use MySQL 8 at work.",
 "My dentist appointment is on 12 January.",
 "My appointment got moved to 15 January.",
 "When is my dentist appointment?",
 "What database do we use at work?",
 "I sold the Golf and bought a bike.",
 "How do I get to work now?",
 "Do not ever recommend fast food to me.",
 "My sister Clara lives in Munich.",
 "Plan a visit to my sister.",
 "I changed jobs, I now work at Siemens.",
 "Where do I work?",
 "What units do I prefer?",
 "I stopped being vegetarian, I eat fish now.",
 "Suggest a dinner.",
 "My running goal is 10 km under 50 minutes.",
 "I ran 10 km in 52 minutes today.",
 "What's my running goal?",
 "Where does Clara live?",
 "Is there anything I asked you never to recommend?",
 "What city do I live in?",
 "My favourite band is Radiohead.",
 "Recommend me some music.",
 "Thanks, bye.",
]
hist = {"ana": [], "ben": []}
for i in range(30):
    for user, msgs in (("ana", A), ("ben", B)):
        hist[user].append({"role": "user", "content": msgs[i]})
        stream = i % 3 == 2
        if stream:
            s = c.chat.completions.create(model="gpt-4o-mini", messages=hist[user], user=user, stream=True)
            text = "".join((ch.choices[0].delta.content or "") for ch in s if ch.choices)
        else:
            raw = c.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=hist[user], user=user)
            r = raw.parse(); text = r.choices[0].message.content
            if i % 10 == 0: print(user, i, {k: v for k, v in raw.headers.items() if k.startswith("x-lcm")})
        hist[user].append({"role": "assistant", "content": text})
print("done")
