"""Source code and config pasted without a fence state nothing (issue 24).

A pasted function or config read line by line gave facts and bounds with odd
subjects ("def fetch url retries" = 3, "attempt timeout" = 30, "having count o.id" >
5), and two pastes of one setting (``timeout = 30`` in a client, ``timeout = 45`` in a
TOML file) put a ``CONFLICTS … unresolved, ask the user`` line in every block.
:mod:`memory_core.extraction.listing` finds such lines by their shape; the prose
around a paste is still read, and one line of code in a sentence is read as before.
Extraction, the real engine on SQLite, and the block the upstream received."""

from __future__ import annotations

from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from memory_core.extraction.prepare import fold_width, machine_spans, prepare
from memory_core.items import writer
from memory_core.models import Scope
from tests.conftest import RunningProxy, sql_read
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of

SCOPE = Scope("t", "coder")

PYTHON = '''def fetch(url, retries=3):
    timeout = 30
    for attempt in range(retries):
        if retries > 3:
            break
        resp = session.get(url, timeout=timeout)
        if resp.status_code == 200:
            return resp.json()
    return None'''
TOML = '''[server]
port = 9090
workers = 4

[database]
pool_size = 10
timeout = 45
name = "orders"'''
PASTES = {
    "python": PYTHON,
    "python-class": '''class Config:
    max_workers = 8
    timeout = 60
    region = "eu-west-1"

    def validate(self):
        assert self.max_workers <= 16, "too many workers"''',
    "python-docstring": '''def retry(fn, attempts=3):
    """Retry the call up to three times.

    The backoff doubles each time.
    """
    delay = 1
    for i in range(attempts):
        try:
            return fn()
        except IOError:
            time.sleep(delay)
            delay *= 2''',
    "javascript": '''const express = require('express');
const app = express();
const PORT = process.env.PORT || 8080;
app.get('/health', (req, res) => {
  res.json({ status: 'ok' });
});''',
    "typescript": '''type Plan = "free" | "pro" | "team";
export const LIMITS: Record<Plan, number> = {
  free: 3,
  pro: 50,
  team: 500,
};''',
    "go": '''package main

import (
	"fmt"
	"time"
)

func main() {
	timeout := 5 * time.Second
	maxRetries := 3
	fmt.Println("timeout is", timeout, "retries", maxRetries)
}''',
    "rust": '''fn main() {
    let max_conn: u32 = 50;
    let mut pool = Pool::new(max_conn);
    match pool.connect() {
        Ok(c) => println!("connected: {}", c.id),
        Err(e) => eprintln!("error: {}", e),
    }
}''',
    "java": '''public class RetryPolicy {
    private static final int MAX_RETRIES = 5;
    private final long timeoutMs = 2000L;

    public boolean shouldRetry(int attempt) {
        return attempt < MAX_RETRIES;
    }
}''',
    "ruby": '''class Invoice
  attr_reader :total

  def overdue?
    due_on < Date.today
  end
end''',
    "elixir": '''defmodule Cart do
  def total(items) do
    Enum.reduce(items, 0, fn i, acc -> acc + i.price end)
  end
end''',
    "powershell": '''$limit = 10
Get-ChildItem -Path C:\\logs -Filter *.log |
  Sort-Object LastWriteTime -Descending |
  Select-Object -First $limit''',
    "sql-cte": '''WITH recent AS (
  SELECT user_id, max(created_at) AS last_seen
  FROM events
  GROUP BY user_id
)
SELECT count(*) FROM recent WHERE last_seen < now() - interval '30 days';''',
    "sql": '''SELECT u.id, u.name, COUNT(o.id) AS orders
FROM users u
LEFT JOIN orders o ON o.user_id = u.id
WHERE u.status = 'active'
GROUP BY u.id, u.name
HAVING COUNT(o.id) > 5
ORDER BY orders DESC
LIMIT 100;''',
    "sql-lower": '''select id, email
from accounts
where last_login < now() - interval '90 days'
order by last_login;''',
    "yaml": '''server:
  port: 8080
  host: 0.0.0.0
database:
  pool_size: 20
  timeout: 30
logging:
  level: info''',
    "toml": TOML,
    "ansible": '''- hosts: web
  become: true
  tasks:
    - name: install nginx
      apt:
        name: nginx
        state: present''',
    "ini": '''[mysqld]
max_connections = 200
wait_timeout = 600
bind-address = 127.0.0.1''',
    "env": "DATABASE_URL=postgres://localhost:5432/app\nMAX_WORKERS=8\nTIMEOUT=30",
    "dockerfile": '''FROM python:3.11-slim
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
EXPOSE 8000
ENV WORKERS=4
CMD ["gunicorn", "-w", "4", "app:app"]''',
    "diff": '''diff --git a/config.py b/config.py
--- a/config.py
+++ b/config.py
@@ -10,7 +10,7 @@ class Settings:
     host = "0.0.0.0"
-    timeout = 30
+    timeout = 60
     retries = 3''',
    "shell": '''#!/bin/bash
set -euo pipefail
export TIMEOUT=30
for host in web1 web2 web3; do
  ssh "$host" "sudo systemctl restart nginx"
done''',
    "c": '''#include <stdio.h>
int main(void) {
    int max = 10;
    for (int i = 0; i < max; i++) {
        printf("%d\\n", i);
    }
    return 0;
}''',
}
WRAPPERS = [
    ("Here's my config — note the timeout must stay at 30 s:",
     "Also, we deploy on Fridays only."),
    ("这是我的配置，注意超时必须保持30秒：", "另外，我们只在周五部署。"),
    ("これが設定です。タイムアウトは必ず30秒のままにしてください：",
     "あと、デプロイは金曜日だけです。"),
]


def shape(text: str) -> list[tuple[str, str | None, float | None]]:
    return [(i.kind, i.subject, i.value) for i in extract(text)]


@pytest.mark.parametrize("paste", PASTES.values(), ids=PASTES.keys())
def test_unfenced_source_code_or_config_yields_no_item(paste: str) -> None:
    assert extract(paste) == [], shape(paste)
    assert len(prepare(paste)) == len(paste)


@pytest.mark.parametrize("before, after", WRAPPERS, ids=["en", "zh", "ja"])
@pytest.mark.parametrize("paste", PASTES.values(), ids=PASTES.keys())
def test_prose_around_unfenced_code_is_still_read(paste: str, before: str, after: str) -> None:
    """The rule before the paste and the fact after it, as if the paste were not there."""
    alone = shape(f"{before}\n{after}")
    assert len(alone) >= 2, alone
    assert shape(f"{before}\n{paste}\n{after}") == alone


@pytest.mark.parametrize("text, items", [
    ("Set `retries: 3` in the config.", [("constraint", "set config retries", None)]),
    ("Set retries = 3 in the config.", [("constraint", "set retries config", 3.0)]),
    ("timeout = 30", [("fact", "timeout", 30.0)]),
    ("What does this do?\ntimeout = 30", [("question", None, None), ("fact", "timeout", 30.0)]),
    ("Please use `max_workers = 8` in prod.\nThanks!", [("constraint", "max_workers", None)]),
])
def test_one_line_of_code_in_prose_is_read_as_before(
        text: str, items: list[tuple[str, str | None, float | None]]) -> None:
    assert shape(text) == items


@pytest.mark.parametrize("text", [
    "Budget: 500 euros\nDeadline: Friday\nTeam: 4 people\nVenue: Berlin",
    "Goal: ship the billing export by Friday.\nProgress: CSV writer done, tests pending.\n"
    "TODO: add the PDF renderer.",
    "My setup:\nOS: Fedora 40\nEditor: VS Code\nPython: 3.11",
    "mon: gym\ntue: swim\nwed: rest\nthu: gym\nfri: yoga",
    "Our stack:\nfrontend = React\nbackend = FastAPI\ndb = Postgres",
    "Postgres -> MySQL\nRedis -> Memcached\nJenkins -> GitHub Actions",
    "i changed fetch() to use retry()\nnow getUser() returns null\nany idea why",
    "2 cups flour; 1 egg;\n1 tbsp sugar;\nmix well and bake for 20 minutes.",
    "The limits are:\nCPU <= 2 cores\nmemory <= 4 GB\ndisk >= 20 GB",
    "Steps:\n1. backup the db\n2. run the migration (staging first!)\n3. check the results",
    "order of the day:\nselect a venue\nupdate the invite list\ncreate the agenda",
    "Jonas: I'll take the flaky-test ticket.\nMei: cool, I've got the docs then.",
    "| service | port |\n|---|---|\n| api | 8080 |\n| db | 5432 |",
    "things I need to do\nbuy milk\ncall mom then\nwhat else should I do",
    "目标：本周完成支付模块。\n进展：接口已经写完了。\n待办：补充单元测试。",
    "設定：\nポート：8080\nタイムアウト：30秒\n今後は敬語で答えてください。",
])
def test_notes_and_lists_that_look_a_little_like_code_are_still_read(text: str) -> None:
    scan = fold_width(text)  # as prepare() reads it: ： is :
    assert machine_spans(scan) == [], [scan[a:b] for a, b in machine_spans(scan)]


@pytest.mark.parametrize("text", [
    "port = 9000\n# I always use debug mode\ndebug = true",
    "Here is my config:\nport = 9000\ndebug = true\n# I always use debug mode",
    "workers = 4\n; we never cache here\ncache = off",
    "Why does it fail?\nhost = example.org\n# I prefer short timeouts\ntimeout = 5",
])
def test_key_lines_beside_a_comment_are_a_pasted_config(text: str) -> None:
    scan = fold_width(text)
    masked = "".join(scan[a:b] for a, b in machine_spans(scan))
    assert "always use" not in prepare(text) and "prefer short" not in prepare(text)
    assert "= " in masked and ("#" in masked or ";" in masked), masked
    assert not [i for i in extract(text) if i.kind in ("preference", "constraint")], shape(text)


@pytest.mark.parametrize("text", [
    "# Notes\nBudget = 500\nDeadline = Friday",  # a heading above notes, no file comment
    "Our stack:\nfrontend = React\nbackend = FastAPI",
])
def test_key_lines_under_a_heading_alone_are_still_read(text: str) -> None:
    assert machine_spans(fold_width(text)) == []


def put(engine: Engine, text: str) -> None:
    engine.store.write_tx_sync(lambda c: writer.store_extracted(
        c, SCOPE, 1, None, extract(text)))  # type: ignore[arg-type]  # items, no message


def rows(engine: Engine) -> list[dict[str, Any]]:
    return sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT text, conflict_with FROM memory_items WHERE status = 'active' ORDER BY id")])


@pytest.mark.parametrize("first, second", [
    ("python", "toml"), ("toml", "yaml"), ("python-class", "diff"), ("java", "c"),
    ("sql", "sql-lower"),
])
def test_two_pasted_snippets_leave_no_item_and_no_conflict(
        engine: Engine, first: str, second: str) -> None:
    put(engine, f"Here's the first one:\n{PASTES[first]}\nThe staging port is 5433.")
    put(engine, f"And the second:\n{PASTES[second]}\nWe deploy on Fridays only.")
    assert [r["text"] for r in rows(engine)] == [
        "The staging port is 5433.", "We deploy on Fridays only."]
    assert not any(r["conflict_with"] for r in rows(engine))


async def test_pasted_code_puts_no_conflict_in_another_conversations_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream, session="review")
    await agent.say("The API timeout must stay at 30 s.")
    await agent.say(f"Why does this retry forever?\n{PYTHON}")
    await agent.say(f"And here is the service config:\n{TOML}\nWe deploy on Fridays only.")
    await proxy.settle()
    other = Agent(proxy, upstream, session="other")
    await other.say("What timeout should the new client use?")
    block = block_of(other.upstream_last_user())
    assert "The API timeout must stay at 30 s." in block, block
    assert "CONFLICTS" not in block and "timeout = " not in block, block
