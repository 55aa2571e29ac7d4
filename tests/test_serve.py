"""`contractsim serve`: a real uvicorn server (in a thread, on a free port) asked by a real
HTTP client (httpx2, which the `mcp` package brings)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
import uvicorn
from click.testing import CliRunner

import contractsim
from contractsim.cli import main
from contractsim.integrations.serve import Limits, create_app

ROOT = Path(__file__).resolve().parent.parent
FILE_SYSTEM = ROOT / "examples" / "file_system" / "file_system.contract"
NOTES = ROOT / "tests" / "mcp_servers" / "notes.contract"
FAILING_PLAN = ROOT / "examples" / "file_system" / "plans" / "fails_read_after_delete.yaml"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Running:
    def __init__(self, directory: Path, limits: Limits | None = None) -> None:
        app = create_app(
            directory,
            lambda text, name: contractsim.loads(text, name),
            lambda old, new: contractsim.diff(old, new, witnesses=False),
            poll_seconds=0.1,
            limits=limits,
        )
        self.port = _free_port()
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> httpx.Client:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        self.client = httpx.Client(base_url=self.url, timeout=30)
        return self.client

    def __exit__(self, *exc: Any) -> None:
        self.client.close()
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shutil.copy(FILE_SYSTEM, tmp_path / "file_system.contract")
    shutil.copy(NOTES, tmp_path / "notes.contract")
    return tmp_path


@pytest.fixture
def client(folder: Path) -> Iterator[httpx.Client]:
    with Running(folder) as c:
        yield c


def test_health_and_the_list(client: httpx.Client) -> None:
    assert client.get("/health").json() == {"status": "ok", "contracts": 2, "errors": []}
    listed = client.get("/contracts").json()
    assert [(c["name"], c["version"]) for c in listed] == [
        ("file_system", contractsim.load(FILE_SYSTEM).version),
        ("notes", "1.0.0"),
    ]
    assert listed[1]["tools"] == ["add_note", "read_note", "delete_note"]


def test_exports_are_those_of_contractsim_export(client: httpx.Client) -> None:
    notes = contractsim.load(NOTES)
    assert client.get("/contracts/notes/openapi.json").json() == notes.export("openapi")
    yaml_answer = client.get("/contracts/notes/openapi.yaml")
    assert yaml_answer.headers["content-type"].startswith("application/yaml")
    import yaml

    assert yaml.safe_load(yaml_answer.text) == notes.export("openapi")
    assert client.get("/contracts/notes/mcp").json() == notes.export("mcp")
    assert client.get("/contracts/notes/openai").json() == notes.export("openai")
    assert client.get("/contracts/notes/jsonschema/add_note").json() == notes.export(
        "jsonschema", "add_note"
    )
    card = client.get("/contracts/notes/card/read_note")
    assert card.text == notes.card("read_note") + "\n"
    assert client.get("/contracts/notes/version").json() == {"name": "notes", "version": "1.0.0"}


def test_unknown_contract_tool_or_export_is_404_with_a_suggestion(client: httpx.Client) -> None:
    missing = client.get("/contracts/note/mcp")
    assert missing.status_code == 404
    assert missing.json() == {
        "error": "NOT_FOUND",
        "message": "no contract `note` is served",
        "hint": "did you mean `notes`?",
    }
    tool = client.get("/contracts/notes/card/add_notes")
    assert tool.status_code == 404
    assert tool.json()["message"] == "contract `notes` declares no tool `add_notes`"
    assert tool.json()["hint"] == "did you mean `add_note`?"
    assert client.get("/contracts/notes/jsonschema/nope").status_code == 404
    assert client.get("/contracts/notes/swagger").status_code == 404


def test_simulate_answers_the_json_report_of_simulate(client: httpx.Client, folder: Path) -> None:
    answer = client.post("/contracts/file_system/simulate", content=FAILING_PLAN.read_bytes())
    assert answer.status_code == 200
    served = str(folder / "file_system.contract")
    cli = CliRunner().invoke(main, ["simulate", served, str(FAILING_PLAN), "--format", "json"])
    assert cli.exit_code == 1
    assert answer.json() == json.loads(cli.output)
    assert answer.json()["verdict"] == "fails"


def test_a_bad_plan_is_400_with_the_diagnostic(client: httpx.Client) -> None:
    plan = "steps:\n  - tool: add_note\n    argz: {name: a, text: b}\n"
    answer = client.post("/contracts/notes/simulate", content=plan)
    assert answer.status_code == 400
    body = answer.json()
    assert body["error"] == "BAD_PLAN"
    (d,) = body["diagnostics"]
    assert d["file"] == "<request body>"
    assert (d["line"], d["col"], d["code"]) == (2, 1, "E0701")
    assert d["message"] == "step 1: unknown field `argz`"
    assert d["hint"] == "a step has `tool` and `args`"
    not_yaml = client.post("/contracts/notes/simulate", content="steps: [")
    assert not_yaml.status_code == 400
    assert not_yaml.json()["diagnostics"][0]["file"] == "<request body>"


def test_an_oversized_plan_is_413(folder: Path) -> None:
    with Running(folder, Limits(max_body=1000)) as client:
        big = "steps:\n" + "  - tool: read_note\n    args: {name: a}\n" * 100
        answer = client.post("/contracts/notes/simulate", content=big)
        assert answer.status_code == 413
        assert answer.json()["error"] == "TOO_LARGE"

        def chunks() -> Iterator[bytes]:  # no content-length: counted as it arrives
            for _ in range(100):
                yield b"  - tool: read_note\n    args: {name: a}\n"

        streamed = client.post("/contracts/notes/simulate", content=chunks())
        assert streamed.status_code == 413


def test_a_simulation_over_time_is_503(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from contractsim.integrations import serve

    def slow(*args: Any) -> dict[str, Any]:
        time.sleep(2)
        return {}

    monkeypatch.setattr(serve, "_simulate", slow)
    with Running(folder, Limits(simulate_seconds=0.2)) as client:
        answer = client.post("/contracts/notes/simulate", content="steps: []\n")
        assert answer.status_code == 503
        assert answer.json() == {
            "error": "BUSY",
            "message": "the simulation did not finish within 0.2 s",
            "hint": "try a shorter plan, or later",
        }


def test_a_plan_sent_too_slowly_is_408(folder: Path) -> None:
    with Running(folder, Limits(body_seconds=0.3)) as client:

        def trickle() -> Iterator[bytes]:
            yield b"steps:\n"
            time.sleep(1.5)
            yield b"  - tool: read_note\n    args: {name: a}\n"

        answer = client.post("/contracts/notes/simulate", content=trickle())
        assert answer.status_code == 408
        assert answer.json()["error"] == "TIMEOUT"


def test_concurrent_requests(client: httpx.Client) -> None:
    plan = FAILING_PLAN.read_bytes()

    def ask(i: int) -> tuple[int, str]:
        if i % 2:
            r = client.post("/contracts/file_system/simulate", content=plan)
            return r.status_code, r.json()["verdict"]
        r = client.get("/contracts/notes/card/add_note")
        return r.status_code, r.text[:8]

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(ask, range(40)))
    assert all(status == 200 for status, _ in results)
    assert {v for s, v in results[1::2]} == {"fails"}


def _wait_for(client: httpx.Client, check: Any, seconds: float = 15) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        body = client.get("/health").json()
        if check(body):
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.05)


def test_reload_keeps_the_last_good_version_and_reports_the_error(
    client: httpx.Client, folder: Path
) -> None:
    path = folder / "notes.contract"
    good = path.read_text()
    path.write_text(good.replace('version "1.0.0"', 'version "1.1.0"'))
    _wait_for(client, lambda b: client.get("/contracts/notes/version").json()["version"] == "1.1.0")
    path.write_text(good.replace("require name in notes", "require nme in notes", 1))
    body = _wait_for(client, lambda b: b["status"] == "errors")
    (problem,) = body["errors"]
    assert problem["name"] == "notes" and problem["served"] is True
    d = problem["diagnostics"][0]
    assert d["file"] == str(path)
    assert (d["line"], d["col"], d["code"]) == (22, 11, "E0201")
    assert d["message"] == "unknown name `nme` in tool `read_note`"
    # the last good version is still served
    assert client.get("/contracts/notes/version").json()["version"] == "1.1.0"
    assert client.get("/contracts").json()[1]["stale"] is True
    path.write_text(good)
    _wait_for(client, lambda b: b["status"] == "ok")
    assert client.get("/contracts/notes/version").json()["version"] == "1.0.0"
    (folder / "notes.contract").unlink()
    _wait_for(client, lambda b: b["contracts"] == 1)
    assert client.get("/contracts/notes").status_code == 404


def test_changelog_from_git_history(folder: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=folder,
            check=True,
            capture_output=True,
        )

    git("init", "-q")
    git("add", "notes.contract")
    git("commit", "-q", "-m", "first")
    path = folder / "notes.contract"
    text = path.read_text()
    path.write_text(
        text.replace('version "1.0.0"', 'version "2.0.0"').replace(
            "tool delete_note(name: str)", "tool delete_note(name: str, force: bool)"
        )
    )
    git("commit", "-q", "-am", "second")
    with Running(folder) as client:
        log = client.get("/contracts/notes/changelog").json()
        assert log["version"] == "2.0.0"
        history = log["history"]
        assert [h["version"] for h in history] == ["2.0.0", "1.0.0"]
        assert "diff" in history[0] and "diff" not in history[1]
        changes = history[0]["diff"]["changes"]
        assert any(c["tool"] == "delete_note" for c in changes), changes


def test_without_git_the_changelog_is_the_version(client: httpx.Client, folder: Path) -> None:
    if subprocess.run(["git", "rev-parse"], cwd=folder, capture_output=True).returncode == 0:
        pytest.skip("the temporary folder is inside a git repository")
    log = client.get("/contracts/notes/changelog").json()
    assert log["version"] == "1.0.0" and log["history"] is None


def test_cli_serve_bad_input_exits_2(tmp_path: Path) -> None:
    missing = CliRunner().invoke(main, ["serve", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2
    assert "is not a directory" in missing.output
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = CliRunner().invoke(main, ["serve", str(tmp_path), "--port", str(port)])
    assert busy.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in busy.output
