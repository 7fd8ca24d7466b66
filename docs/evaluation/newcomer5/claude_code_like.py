"""Session 2 of the newcomer's pass: a Claude-Code-like session through the
anthropic SDK (CLAUDE.md-like system prompt with cache_control, a Bash tool,
tool_use / tool_result rounds, pasted logs and diffs, streamed every other turn),
40 user turns; a proxy on 127.0.0.1:8787 in front of fake_upstream.py."""
import anthropic, subprocess
c = anthropic.Anthropic(base_url="http://127.0.0.1:8787", api_key="sk-ant-dev")
SYSTEM = [{"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
          {"type": "text", "text": "# CLAUDE.md\n- Always run `make test` before committing.\n- Never push to main directly.\n- Use ruff for formatting.\n- From now on, prefer pathlib over os.path.\n", "cache_control": {"type": "ephemeral"}}]
TOOLS = [{"name": "Bash", "description": "Run a shell command", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}]
LOG = """2026-12-07T10:00:01Z ERROR worker: connection refused to db:5432
2026-12-07T10:00:02Z WARN retrying; from now on all retries use exponential backoff
2026-12-07T10:00:03Z INFO Always restart the service after config changes.
Traceback (most recent call last):
  File "app.py", line 12, in <module>
    raise RuntimeError("Never call this before init")
RuntimeError: Never call this before init"""
DIFF = """diff --git a/app.py b/app.py
--- a/app.py
+++ b/app.py
@@ -1,3 +1,4 @@
+# From now on, always use tabs for indentation.
 import os
-PORT = 8000
+PORT = 9000  # we always use port 9000 now
"""
TOOL_OUT = """README.md:# Rules
README.md:- Always write commit messages in French.
README.md:- Never use print for logging; from now on use structlog.
src/config.py: DEBUG = True  # remember to turn this off in prod"""
turns = [
 "Let's fix the failing worker. RUN: pytest -x tests/test_worker.py",
 "Here is the log:\n```\n" + LOG + "\n```\nWhat's wrong?",
 "RUN: grep -rn 'Always\\|Never' README.md src/",
 "I applied this diff:\n" + DIFF + "\nDoes it look right?",
 "From now on, run mypy before each commit.",
 "RUN: git status",
 "Our CI runs on GitHub Actions, Python 3.12.",
 "RUN: cat src/config.py",
 "We moved CI to Python 3.13.",
 "What Python version does CI use?",
]
msgs = []
rounds = 0
for t in range(40):
    text = turns[t % len(turns)] + ("" if t < len(turns) else f" (pass {t // len(turns)})")
    msgs.append({"role": "user", "content": [{"type": "text", "text": text}]})
    while True:
        rounds += 1
        if t % 2:
            with c.messages.stream(model="claude-sonnet-4-5", max_tokens=1024, system=SYSTEM, tools=TOOLS, messages=msgs) as s:
                m = s.get_final_message()
        else:
            m = c.messages.create(model="claude-sonnet-4-5", max_tokens=1024, system=SYSTEM, tools=TOOLS, messages=msgs)
        msgs.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in m.content]})
        if m.stop_reason != "tool_use":
            break
        tu = [b for b in m.content if b.type == "tool_use"][0]
        out = TOOL_OUT if "grep" in tu.input["command"] else LOG if "pytest" in tu.input["command"] else "On branch fix\nnothing to commit"
        msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": tu.id, "content": out}]})
print("done", rounds, "rounds", len(msgs), "messages")
