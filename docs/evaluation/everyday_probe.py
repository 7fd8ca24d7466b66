"""Everyday sentences through ``extract()``: what each yields, and whether it stands.

A review probe for rules that read standing items and task state from form (team
practices, rule lists, reasons before an order, unlabelled task state): sentences of
daily life in English, Chinese and Japanese that share those forms' words. Each line
prints the items as ``(kind, text, lasting, task label, STANDS)``. With ``--time``,
one message of about 100 KB per pattern and the seconds ``extract()`` took:

    cd /tmp && PYTHONPATH=$TREE python $TREE/docs/evaluation/everyday_probe.py [--time]
"""
from __future__ import annotations

import sys
import time

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract

SENTENCES = [
    "We run in the park every morning.", "We store the leftovers in the freezer.",
    "We use the car to go to the supermarket.", "We train on Saturdays at the club.",
    "We ship presents to my grandma in Ohio every December.",
    "We write to each other in French.", "We test our smoke alarms on the first of the month.",
    "Our team uses Slack to chat about lunch.", "We usually build sandcastles on the beach.",
    "We use chopsticks to eat noodles.", "Next, I want to go to the beach.",
    "Then we had dinner and went home.", "I'm done with my coffee.", "Still need to buy milk.",
    "We need to check the weather before we leave.", "Let's do dinner at 7.",
    "I finished the book yesterday, it was great.", "Waiting on my friend to arrive.",
    "The goal is to have fun.", "I'm stuck on level 12 of the game.",
    "Let's decide: pizza or sushi?", "Let's decide: we go to Rome in May.",
    "我们用筷子吃饭。", "我们都用微信聊天。", "我们一直用这个锅做饭。", "以后有空请来我家玩。",
    "以后有机会请大家吃饭。", "以后见面请多关照。", "以后你来北京请告诉我。",
    "因为下雨，所以我们没去公园。", "他很忙，所以请你帮我一下。",
    "我喜欢猫，所以请给我推荐一些猫的电影。", "我是素食者，所以请不要推荐肉菜。",
    "下一步我们去吃饭吧。", "我做完作业了。", "我卡在第三关了。", "我们的目标是玩得开心。",
    "うちでは毎朝パンを使って朝ごはんを作っています。", "うちは車で旅行しています。",
    "雨なので、傘を持って行ってください。", "猫が好きなので、猫の映画を教えてください。",
    "ベジタリアンなので、肉料理は勧めないでください。", "次は公園に行きましょう。",
    "宿題は完了しました。", "彼は忙しいので、代わりにお願いします。", "今日は疲れたので、早く寝ます。",
    "House rules:\n- no shoes inside\n- dinner at 7", "My grandma's rules:\n- wash hands",
    "Today's plan:\n- buy milk\n- call mom",
    "Packing list rules:\n- bring a towel\n- sunscreen is a must",
]
N = 100_000
LONG = {
    "bullets under a rule lead": "Ground rules:\n" + "- no force pushes to main ever\n" * (N // 30),
    "we use + words": "We use " + "the big thing " * (N // 14),
    "以后 repeated": "以后" * (N // 2),
    "以后有空 + 我": ("以后有空" + "我" * 8) * (N // 12),
    "我们的 + 的": "我们的" + "的" * N,
    "うちでは + あ": "うちでは" + "あ" * N,
    "なので、 repeated": "雨なので、" * (N // 5),
    "，所以 repeated": "下雨，所以" * (N // 5),
    "Let's decide: + a": "Let's decide: " + "a " * (N // 2),
    "Next, + work": "Next, " + "wire the url and " * (N // 17),
    "stuck on, repeated": "stuck on the build, " * (N // 20),
}


def main() -> None:
    for text in SENTENCES:
        items = [(i.kind, i.text[:50], "lasting" if i.lasting else "", i.task_label or "",
                  "STANDS" if stands(i) else "") for i in extract(text)]
        print(repr(text[:60]), "->", items)
    if "--time" in sys.argv:
        for name, text in LONG.items():
            start = time.perf_counter()
            extract(text)
            print(f"{time.perf_counter() - start:7.3f} s  {name} ({len(text)} chars)")


if __name__ == "__main__":
    main()
