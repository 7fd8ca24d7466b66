"""``lcm-proxy serve``'s admin token options: ``--admin-token-file`` reads the token
from a file (kept out of ``ps``), ``--admin-token`` warns that ``ps`` shows it.

The real ``serve`` command builds the real app; only ``web.run_app`` is replaced by a
recorder (the one thing not run: serving forever), which closes the bound sockets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from click.testing import CliRunner, Result

from proxy import cli
from proxy.appkeys import SETTINGS

TOKEN = "file-token-0123456789abcdef"


def serve(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *args: str,
          env: dict[str, str] | None = None) -> tuple[Result, list[web.Application]]:
    apps: list[web.Application] = []

    def run_app(app: web.Application, **kw: Any) -> None:
        apps.append(app)
        for sock in kw["sock"]:
            sock.close()

    monkeypatch.setattr(web, "run_app", run_app)
    env = {"LCM_DATA_DIR": str(tmp_path / "d"), "LCM_EMBEDDING__PROVIDER": "hashing",
           "LCM_UPSTREAM": "http://127.0.0.1:9/v1", **(env or {})}
    return CliRunner().invoke(cli.main, ["serve", "--port", "0", *args], env=env), apps


@pytest.mark.parametrize("content", [TOKEN + "\n", TOKEN, TOKEN + "\r\n"])
def test_the_admin_token_file_sets_the_token(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path, content: str) -> None:
    path = tmp_path / "admin-token"
    path.write_bytes(content.encode())
    result, apps = serve(monkeypatch, tmp_path, "--admin-token-file", str(path))
    assert result.exit_code == 0, result.output
    assert apps[0][SETTINGS].proxy.admin_token == TOKEN
    assert "--admin-token" not in result.stderr and TOKEN not in result.output


def test_the_file_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    path = tmp_path / "admin-token"
    path.write_text(TOKEN + "\n")
    result, apps = serve(monkeypatch, tmp_path, "--admin-token-file", str(path),
                         env={"LCM_ADMIN_TOKEN": "from-the-environment-0123"})
    assert result.exit_code == 0, result.output
    assert apps[0][SETTINGS].proxy.admin_token == TOKEN


@pytest.mark.parametrize("content,why", [
    (None, "cannot read the admin token file"),
    ("", "is empty"), ("\n", "is empty"), ("  \n", "is empty"),
    (f"{TOKEN}\nsecond line\n", "on one line"),
    (b"\xff\xfe token", "is not UTF-8 text"),
])
def test_an_unusable_token_file_stops_the_start(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path, content: str | bytes | None,
                                                why: str) -> None:
    path = tmp_path / "admin-token"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    result, apps = serve(monkeypatch, tmp_path, "--admin-token-file", str(path))
    assert result.exit_code == 2 and apps == []
    assert why in result.stderr and str(path) in result.stderr
    assert "second line" not in result.stderr and TOKEN not in result.stderr


def test_both_token_options_are_refused(monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    path = tmp_path / "admin-token"
    path.write_text(TOKEN)
    result, apps = serve(monkeypatch, tmp_path, "--admin-token", TOKEN,
                         "--admin-token-file", str(path))
    assert result.exit_code == 2 and apps == [] and "not both" in result.stderr


def test_the_token_on_the_command_line_gets_a_warning(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    result, apps = serve(monkeypatch, tmp_path, "--admin-token", TOKEN)
    assert result.exit_code == 0, result.output
    assert apps[0][SETTINGS].proxy.admin_token == TOKEN
    (line,) = [ln for ln in result.stderr.splitlines() if "--admin-token " in ln]
    assert "ps" in line and "LCM_ADMIN_TOKEN" in line and "--admin-token-file" in line
    assert TOKEN not in result.stderr
    result, _ = serve(monkeypatch, tmp_path, env={"LCM_ADMIN_TOKEN": TOKEN})
    assert result.exit_code == 0 and "--admin-token" not in result.stderr
