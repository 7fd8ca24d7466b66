"""Filler turns, assistant replies and the agent's own tools (written for this harness).

Filler is what a coding agent's user says between the things worth remembering;
it deliberately reuses the vocabulary of the facts (upload, cache, retry, database,
timeout) without stating values, so keyword matching alone cannot tell them apart.
Replies are what the fake upstream answers: generic, never restating a key value
(no model is judged here; see :mod:`proxy.evaluation.fake`).
"""

from __future__ import annotations

import random

SYSTEM_PROMPT = (
    "You are a careful coding assistant working in the user's repository. Use the tools "
    "to run commands or read files when you need facts from the machine; otherwise answer "
    "briefly and say which files you would touch."
)

TOOLS = [
    {"type": "function", "function": {
        "name": "run_shell", "description": "Run a shell command in the repository.",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}},
                       "required": ["cmd"]}}},
    {"type": "function", "function": {
        "name": "read_file", "description": "Read a file of the repository.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                       "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "search_code", "description": "Search the repository for a pattern.",
        "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}},
                       "required": ["pattern"]}}},
]
"""The client's own tools, sent with every request (never memory tools)."""

FILES = ("sync/worker.py", "api/routes.py", "billing/export.py", "ui/settings.tsx",
         "db/migrations/0042_add_index.sql", "core/retry.py", "cli/main.py", "docs/setup.md",
         "tests/test_sync.py", "infra/helm/values.yaml", "web/src/cart.ts", "jobs/cleanup.py",
         "auth/session.py", "upload/chunker.py", "cache/keys.py", "search/indexer.py")
COMPONENTS = ("retry loop", "login form", "export job", "settings page", "rate limiter",
              "cache layer", "upload handler", "search index", "notification service",
              "audit log", "feature flags", "session store", "database adapter",
              "timeout wrapper", "backup script", "queue consumer")
ACTIONS = ("rename", "split", "simplify", "document", "add logging to", "write a test for",
           "refactor", "profile")
COMPONENTS_ZH = ("重试逻辑", "登录表单", "导出任务", "设置页面", "限流器", "缓存层",
                 "上传处理", "搜索索引", "数据库适配层", "备份脚本")
COMPONENTS_JA = ("リトライ処理", "ログインフォーム", "エクスポートジョブ", "設定画面",
                 "レートリミッタ", "キャッシュ層", "アップロード処理", "検索インデックス",
                 "DBアダプタ", "バックアップスクリプト")

FILLER_EN = (
    "Can you {action} the {component} in {file}? Keep the public interface the same.",
    "The {component} throws an error when the input is empty; please look at {file} and "
    "suggest a fix.",
    "Let's {action} the {component} next. I'd like the change to stay small if possible.",
    "I read through {file} again and the {component} feels too clever. What would a plainer "
    "version look like?",
    "Please review {file}: is the {component} thread-safe, or do we need a lock around it?",
    "Quick question about the {component}: why does it read the config on every call instead "
    "of once at startup?",
    "Add a docstring to the {component} explaining why it exists, not just what it does.",
    "The tests for the {component} are flaky on CI. Can you see anything in {file} that "
    "depends on timing?",
    "Let's pause the {component} work and look at {file} instead; the linter complains about "
    "unused imports there.",
    "What's the simplest way to make the {component} configurable without adding another "
    "environment variable?",
    "Rename the helper in {file} to something that says what it returns.",
    "Can you write a short migration note for the {component} change so the on-call person "
    "knows what moved?",
    "I think the {component} and the {component2} duplicate some logic. Could you check "
    "{file} for overlap?",
    "Please make the error message in the {component} say which field was invalid.",
    "Let's keep going with {file}. Next, {action} the {component} and show me the diff.",
    "Is the {component} covered by integration tests, or only by unit tests?",
    "Before we merge, check that {file} still passes the type checker.",
    "The {component} logs the whole request body at info level; that's too noisy, lower it "
    "to debug.",
    "Summarise what we changed in {file} today in three bullet points.",
    "Does the {component} need to handle unicode file names? Some users upload files named "
    "in Japanese.",
    "When the {component} hits a timeout, does it retry or surface the error to the caller?",
    "Move the constants at the top of {file} next to the {component} that uses them.",
)
FILLER_ZH = (
    "帮我看一下{file}里的{component}，有没有可以简化的地方？",
    "{component}在输入为空的时候会报错，麻烦给个修复方案。",
    "把{file}里的辅助函数改个更清楚的名字吧。",
    "这个{component}的测试在CI上时好时坏，帮我查查{file}里是不是有和时间相关的逻辑。",
    "先别管{component}了，看看{file}里那些没用到的导入。",
    "给{component}补一段说明，讲清楚它为什么存在，而不只是它做了什么。",
    "{component}的日志太吵了，把级别降到debug。",
    "今天在{file}里改了什么？用三点总结一下。",
    "{component}遇到超时的时候是重试还是直接把错误抛给调用方？",
)
FILLER_JA = (
    "{file}の{component}をもう少しシンプルにできますか？",
    "{component}は入力が空だとエラーになります。修正案をください。",
    "{file}のヘルパー関数に、戻り値が分かる名前を付けてください。",
    "{component}のテストがCIでたまに落ちます。{file}にタイミング依存の箇所がないか見てください。",
    "{component}はいったん置いて、{file}の未使用インポートを見てください。",
    "{component}に、なぜ存在するのかを説明するコメントを足してください。",
    "{component}のログが多すぎるので、レベルをdebugに下げましょう。",
    "今日{file}で変えた内容を三行でまとめてください。",
    "{component}がタイムアウトしたとき、リトライしますか、それとも呼び出し元にエラーを返しますか？",
)
REPLY_EN = (
    "I looked at {file}. The {component} does three things at once: it parses the input, "
    "applies the defaults and writes the result. I would split the parsing into its own "
    "function, keep the defaults next to the settings, and leave the write where it is. The "
    "change is mechanical and the existing tests should cover most of it; I'd add one for "
    "the empty-input case.",
    "Noted. I'll keep that in mind when we get back to the {component}. For now nothing in "
    "{file} needs to change; the next step is still the cleanup we discussed.",
    "Here is the plan for the {component}: first a failing test that reproduces the problem, "
    "then the smallest fix in {file}, then a note in the changelog. I'll show you the diff "
    "before touching anything else.",
    "The {component} is only called from two places, both in {file}, so a rename is safe. I "
    "would also drop the unused parameter while we're there; nothing passes it.",
    "I checked the history of {file}: the {component} grew by accretion, one special case at "
    "a time. A table of cases would make it shorter and easier to test. Want me to sketch it?",
    "Understood. I won't change behaviour in the {component}; this is a refactor only, and "
    "the public functions in {file} keep their signatures.",
    "The flaky part is the sleep in the {component}'s test: it assumes the worker finishes "
    "within a fixed delay. Waiting on an event instead of sleeping would make it "
    "deterministic.",
    "Done. The {component} now reads its configuration once and passes it down explicitly; "
    "{file} has no module-level state left.",
)
REPLY_ZH = (
    "我看了{file}。{component}同时做了解析、补默认值和写结果三件事，建议先把解析拆出来，其他保持不变。",
    "好的，记下了。回到{component}的时候我会注意这一点，目前{file}不需要改动。",
    "计划是：先写一个能复现问题的测试，再在{file}里做最小的修复，最后补上变更说明。",
    "{component}只在{file}里被调用了两次，改名是安全的，顺便把没用的参数也去掉。",
)
REPLY_JA = (
    "{file}を確認しました。{component}は解析・既定値の適用・書き込みを一度にしているので、まず解析を分けるのがよさそうです。",
    "了解しました。{component}に戻るときに気をつけます。今のところ{file}の変更は不要です。",
    "まず問題を再現するテストを書き、{file}で最小限の修正をして、最後に変更履歴を追記します。",
    "{component}は{file}の二か所からしか呼ばれていないので、名前の変更は安全です。",
)
QUESTION_REPLY = {
    "en": "Let me look back at what we said earlier and answer from that.",
    "zh": "我翻一下之前的记录再回答你。",
    "ja": "以前のやり取りを確認してから答えます。",
}
TOOL_FOLLOWUP = {
    "en": "I ran it; the output is above. I'll keep the result in mind for the next step.",
}
FILLER_TOOLS = (
    ("Search the code for places that call the retry helper.", "search_code",
     '{"pattern": "retry_with_backoff("}',
     "sync/worker.py:88: retry_with_backoff(send, attempts=cfg.attempts)\n"
     "upload/chunker.py:41: retry_with_backoff(put_chunk)\n"),
    ("Show me what's in docs/setup.md.", "read_file", '{"path": "docs/setup.md"}',
     "# Setup\n\n1. Create a virtual environment.\n2. Install the dev extra.\n"
     "3. Run the tests before opening a pull request.\n"),
    ("Run the linter on the api package.", "run_shell", '{"cmd": "ruff check api/"}',
     "api/routes.py:12:1: F401 `json` imported but unused\nFound 1 error.\n"),
    ("Which files import the cache keys module?", "search_code",
     '{"pattern": "from cache.keys import"}',
     "api/routes.py:5: from cache.keys import user_key\n"
     "jobs/cleanup.py:3: from cache.keys import stale_prefix\n"),
)


def filler(rng: random.Random, lang: str) -> str:
    """One filler user turn in ``lang`` (en | zh | ja), slots filled from ``rng``."""
    if lang == "zh":
        return rng.choice(FILLER_ZH).format(file=rng.choice(FILES),
                                           component=rng.choice(COMPONENTS_ZH))
    if lang == "ja":
        return rng.choice(FILLER_JA).format(file=rng.choice(FILES),
                                           component=rng.choice(COMPONENTS_JA))
    a, b = rng.sample(COMPONENTS, 2)
    return rng.choice(FILLER_EN).format(file=rng.choice(FILES), component=a, component2=b,
                                        action=rng.choice(ACTIONS))


def reply(rng: random.Random, lang: str) -> str:
    """One assistant reply in ``lang`` for the fake upstream to send."""
    if lang == "zh":
        return rng.choice(REPLY_ZH).format(file=rng.choice(FILES),
                                          component=rng.choice(COMPONENTS_ZH))
    if lang == "ja":
        return rng.choice(REPLY_JA).format(file=rng.choice(FILES),
                                          component=rng.choice(COMPONENTS_JA))
    return rng.choice(REPLY_EN).format(file=rng.choice(FILES), component=rng.choice(COMPONENTS))
