"""A team's way of working, stated as in effect, stands.

"We deploy billing-api with Helm", "We build the frontend with Vite", "We ship the
mobile app through Fastlane", 我们用 GitLab CI 跑流水线, 我们的后端服务是用 Go 写的,
うちのチームでは Terraform でインフラを管理しています: the tool, platform or language
the speaker's team does its work with. No "always" and no number, yet it holds for every
later answer (an agent that forgets it proposes the wrong tool), and it is what an
unmarked update replaces ("We deploy with Argo CD now", issue 24 kind 1). The extraction
marks such a fact ``lasting`` (:attr:`memory_core.extraction.model.Extracted.lasting`).

Read from form, never from a list of tools: the doer is "we" (or "our team", 我们,
うち/弊社/私たち), the verb is one of the work's own (deploy, build, run, host, ship,
use, write, manage, store, track, train, test, release, package, provision, monitor,
serve; 用/使用/采用/部署/托管; を使って/で管理/で運用/でデプロイ/で開発), in the simple
present, with an instrument ("with", "on", "through", "via", "using", "to", "in"); after
a verb daily life shares (build, run, ship, use, write, store, train, test…) the
instrument names a tool (a capitalised word, or one with a digit or a joining mark:
Helm, billing-api); with a bare 我们/うち and a plain "use" (用, を使って), one in Latin
letters.

Not a practice: a past or progressive form ("we deployed it by hand", "we're moving
to…"), a plan or a wish (打算, 想, 予定), a statement bound to a time ("This week we
deploy from the release branch", 今天, 今回), a question, a household's life ("we eat
at 7": no verb of the work; "we run in the park", 我们用这个锅做饭: no tool named). Pure;
called once per user message by :mod:`memory_core.extraction.pipeline`.
"""

from __future__ import annotations

import re
from dataclasses import replace

from memory_core.extraction.model import Extracted

__all__ = ["team_practice"]

_NAME = (r"(?:(?:the|our|a)\s+)?"
         r"(?!(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b)"
         r"(?:(?-i:[A-Z])[\w.+#-]*|\w*[\d.+#/_-]\w)")
"""A tool, platform or language named: a capitalised word (Helm, Go, GitHub) or one
with a digit or a joining mark (billing-api, k8s, node.js); a weekday is a time."""
_EN = re.compile(
    r"^\W*(?:(?:and|but|so|also|here|currently)\W+)?(?:we|our\s+team|the\s+team)\s+"
    r"(?:(?:all|also|currently|still|usually|always|only|mostly)\s+)?"
    r"(?:uses?\s+" + _NAME
    + r"|(?:deploy|host|release|package|provision|monitor)(?:s|es)?\b[^.;!?\n]{0,60}?"
    r"\b(?:with|on|through|via|using|to|in)\s+\S"
    r"|(?:build|run|ship|use|write|manage|store|track|train|test|serve)(?:s|es)?\b"
    r"[^.;!?\n]{0,60}?\b(?:with|on|through|via|using|to|in)\s+" + _NAME + ")", re.I)
"""The team, a verb of its work in the simple present, and an instrument: any after a
verb only the work has ("We deploy on Fridays"), a named one (:data:`_NAME`) after a
verb daily life shares ("we run in the park", "we train on Saturdays" name none)."""
_EN_BOUND = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|this\s+(?:week|sprint|month|time|release|once)"
    r"|next\s+\w+|for\s+now|right\s+now|until|by\s+hand|anymore)\b|\?", re.I)
"""Words that bind the statement to a time or deny it lasts."""
_ZH_ADV = r"(?:都|一直|统一|主要|目前)?是?"
_ZH = re.compile(
    r"^\W*我们(?:(?:团队|组|公司)(?:的[^，。,；;]{1,12}?)?|的[^，。,；;]{1,12}?)" + _ZH_ADV
    + r"(?:用|使用|采用|部署在|托管在|跑在)\s*[A-Za-z0-9\u4e00-\u9fff]"
    r"|^\W*我们" + _ZH_ADV + r"(?:(?:部署在|托管在|跑在)\s*[A-Za-z0-9\u4e00-\u9fff]"
    r"|(?:用|使用|采用)\s*[A-Za-z0-9])")
"""我们 (or its team), its work's thing, and the tool it uses or where it runs; with a
bare 我们 and 用, the tool named in Latin letters (我们用 Jenkins 跑…; 我们用这个锅做饭
is a household's)."""
_ZH_BOUND = re.compile(r"今天|明天|昨天|这次|这周|本周|上周|下周|打算|准备|想|要不要|了[，。]?$|吗|？")
_JA = re.compile(
    r"^\W*(?:(?:弊社|当社)|(?:うち|私たち|我々)(?=の(?:チーム|会社|部署|プロジェクト)))"
    r"(?:の(?:チーム|会社|部署|プロジェクト))?(?:では|は)"
    r"[^。！？]{0,40}?(?:を使って|を使用して|で(?:管理|運用|デプロイ|開発|構築|動かし))"
    r"[^。！？]{0,10}?(?:います|いる|てます)"
    r"|^\W*(?:うち|私たち|我々)(?:では|は)[^。！？]{0,40}?"
    r"(?:[A-Za-z0-9][\w .+#-]*\s*を使(?:って|用して)|で(?:管理|運用|デプロイ|開発|構築|動かし))"
    r"[^。！？]{0,10}?(?:います|いる|てます)")
"""うちのチームでは … で管理しています: the team, its tool, the present of a habit; with a
bare うち/私たち and を使って, the tool named in Latin letters (うちでは毎朝パンを使って…
is a household's)."""
_JA_BOUND = re.compile(r"今日|明日|昨日|今回|今週|来週|先週|予定|つもり|か？|？")


def _practice(text: str, lang: str) -> bool:
    if lang == "zh":
        return _ZH.search(text) is not None and _ZH_BOUND.search(text) is None
    if lang == "ja":
        return _JA.search(text) is not None and _JA_BOUND.search(text) is None
    return _EN.search(text) is not None and _EN_BOUND.search(text) is None


def team_practice(items: list[Extracted]) -> list[Extracted]:
    """``items`` with each fact that states a team's way of working (module doc) marked
    ``lasting``; a guess, a negated, quoted, dated, labelled or task-local fact is left
    as it is."""
    return [replace(i, lasting=True)
            if i.kind == "fact" and not (i.lasting or i.tentative or i.negated or i.quoted
                                         or i.dated or i.local or i.label)
            and _practice(i.text, i.lang) else i
            for i in items]
