"""The documentation holds together: a short README whose links resolve and whose
test command is the one CI runs.

- README.md stays a newcomer's page (at most :data:`README_MAX_LINES` lines);
  measurement history belongs in docs/evaluation/README.md.
- Every relative link in README.md, CHANGELOG.md and docs/**/*.md points at a file
  or folder of the repository.
- The README's "run the tests" command installs and runs exactly what ``.ci/run``
  does, and in a virtual environment other than the one the "run the proxy"
  command serves from (so the second does not reinstall under the first).
- Every ``x-lcm-*`` response header the proxy sets is in the README's tables.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
README_MAX_LINES = 300
DOCS = sorted([README, ROOT / "CHANGELOG.md", *(ROOT / "docs").rglob("*.md")])

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_INLINE_CODE = re.compile(r"`[^`\n]*`")


def relative_links(markdown: str) -> list[str]:
    """Return the targets of the markdown links in ``markdown`` that are paths in the
    repository: fenced code and inline code are skipped, as are URLs with a scheme
    (``https:``, ``mailto:``) and links to an anchor of the same page (``#…``)."""
    text = _INLINE_CODE.sub("", _FENCE.sub("", markdown))
    out = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
            continue
        out.append(target.split("#", 1)[0])
    return out


def code_lines(markdown: str) -> list[str]:
    """Return the lines inside the fenced code blocks of ``markdown``."""
    lines = []
    for block in _FENCE.finditer(markdown):
        lines += block.group(0).splitlines()[1:-1]
    return lines


def _venv_dir(command: str) -> str:
    match = re.search(r"python3? -m venv (\S+)", command)
    assert match, f"no 'python -m venv DIR' in: {command}"
    return match.group(1)


def readme_command(needle: str) -> str:
    """The one line of the README's code blocks holding ``needle``."""
    found = [line.strip() for line in code_lines(README.read_text(encoding="utf-8"))
             if needle in line and "python3 -m venv" in line]
    assert len(found) == 1, f"expected one README command with {needle!r}, found {found}"
    return found[0]


def ci_commands() -> tuple[str, str]:
    """The install and the test command of ``.ci/run`` (without its exit-status capture)."""
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    (install,) = [line for line in lines if line.startswith("pip install")]
    (tests,) = [line for line in lines if line.startswith("python -m pytest")]
    return install, tests.split("||", 1)[0].strip()


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}); move detail to docs/")


@pytest.mark.parametrize("page", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_relative_links_resolve(page: Path) -> None:
    links = relative_links(page.read_text(encoding="utf-8"))
    missing = [t for t in links if t and not (page.parent / t).resolve().exists()]
    assert not missing, f"{page.relative_to(ROOT)} links to missing files: {missing}"


def test_docs_pages_exist_and_readme_links_them() -> None:
    links = {(README.parent / t).resolve() for t in relative_links(README.read_text("utf-8"))}
    for name in ("architecture.md", "configuration.md", "operating.md", "evaluation/README.md"):
        assert (ROOT / "docs" / name).resolve() in links, f"README does not link docs/{name}"
    assert (ROOT / "CHANGELOG.md").resolve() in links


def test_readme_test_command_is_what_ci_runs() -> None:
    command = readme_command("pytest")
    parts = [p.strip() for p in command.split("&&")]
    install, tests = ci_commands()
    assert shlex.split(install) in [shlex.split(p) for p in parts], (command, install)
    assert parts[-1] == tests, (command, tests)


def test_readme_serve_and_test_commands_use_different_venvs() -> None:
    serve = readme_command("lcm-proxy serve")
    tests = readme_command("pytest")
    assert _venv_dir(serve) != _venv_dir(tests), (serve, tests)


def test_link_finder_sees_links_and_skips_code() -> None:
    text = ("see [a](docs/a.md#x) and ![img](pic.png) and [web](https://x.org)\n"
            "[same page](#top) `[not](code.md)`\n```\n[nor](fenced.md)\n```\n")
    assert relative_links(text) == ["docs/a.md", "pic.png"]


def test_readme_documents_every_response_header() -> None:
    # Each header name the proxy's code writes as a literal is a row of a README table.
    used = set()
    for path in (ROOT / "proxy").rglob("*.py"):
        used |= set(re.findall(r'"(x-lcm-[a-z-]+)"', path.read_text("utf-8")))
    assert "x-lcm-memory" in used  # the pattern still finds the headers
    rows = {h for line in README.read_text("utf-8").splitlines() if line.startswith("| `x-lcm")
            for h in re.findall(r"`(x-lcm-[a-z-]+)`", line)}
    assert used <= rows, f"not in README.md's header tables: {sorted(used - rows)}"


SCRIPTS = sorted((ROOT / "docs").rglob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_scripts_import_what_exists(script: Path) -> None:
    """The reproducing scripts under docs/ import names that exist in this tree
    (their commands are quoted in the docs; a moved module must not break them).
    An import guarded by ``try``/``except ImportError`` (an older tree's layout) may
    name what this tree lacks."""
    import ast
    import importlib

    tree = ast.parse(script.read_text(), str(script))
    guarded = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try)
               and any(isinstance(h.type, ast.Name) and h.type.id == "ImportError"
                       for h in t.handlers)
               for h in t.handlers for n in ast.walk(h)}
    for node in ast.walk(tree):
        if id(node) in guarded or not isinstance(node, ast.ImportFrom | ast.Import):
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in ("memory_core", "proxy"):
                    importlib.import_module(alias.name)
            continue
        if node.level or not node.module or node.module.split(".")[0] not in (
                "memory_core", "proxy"):
            continue
        module = importlib.import_module(node.module)
        for alias in node.names:
            if not hasattr(module, alias.name):
                importlib.import_module(f"{node.module}.{alias.name}")  # a submodule
