"""Model resolution order and key hygiene (in-process, no kernel, no network)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pi_notebook.agent import Agent
from pi_notebook.notebook import magic, models
from pi_notebook.notebook.expansion import ExpansionError
from pi_notebook.notebook.options import OptionsError, parse_options
from pi_notebook.notebook.session import NotebookSession

SECRET = "sk-test-secret-value-123"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "PI_NOTEBOOK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    # The real probe, aimed at a closed port on this machine: no Ollama answers.
    monkeypatch.setattr(models, "OLLAMA_URL", f"http://127.0.0.1:{_closed_port()}")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def fake_ollama(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A real HTTP server on 127.0.0.1 answering Ollama's ``/api/tags``."""

    class Tags(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"models": [{"name": "qwen2.5:7b"}]}).encode()
            self.send_response(200 if self.path == "/api/tags" else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Tags)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setattr(models, "OLLAMA_URL", f"http://127.0.0.1:{server.server_port}")
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


def test_demo_is_the_last_resort() -> None:
    resolved = models.resolve_default_model()
    assert (resolved.model.provider, resolved.model.id, resolved.source) == ("demo", "demo", "demo")


def test_env_model_beats_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("PI_NOTEBOOK_MODEL", "openai/gpt-4.1-mini")
    resolved = models.resolve_default_model()
    assert (resolved.model.provider, resolved.source) == ("openai", "PI_NOTEBOOK_MODEL")


def test_key_order_anthropic_openai_openrouter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", SECRET)
    assert models.resolve_default_model().model.provider == "openrouter"
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert models.resolve_default_model().model.provider == "openai"
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    resolved = models.resolve_default_model()
    assert (resolved.model.provider, resolved.source) == ("anthropic", "ANTHROPIC_API_KEY")


@pytest.mark.usefixtures("fake_ollama")
def test_local_ollama_before_demo() -> None:
    resolved = models.resolve_default_model()
    assert (resolved.model.provider, resolved.model.id) == ("ollama", "qwen2.5:7b")
    models.check_api_key(resolved.model)  # keyless


def test_missing_key_message_names_the_variable_only(monkeypatch: pytest.MonkeyPatch) -> None:
    model = models.model_from_name("anthropic/claude-sonnet-4-5")
    with pytest.raises(models.ModelError, match="set ANTHROPIC_API_KEY"):
        models.check_api_key(model)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    models.check_api_key(model)
    session = NotebookSession()
    agent = Agent(model=model)
    session.conversation_of(agent).source = "ANTHROPIC_API_KEY"
    assert SECRET not in magic._status(session, agent)


def test_gemini_models_by_name_need_gemini_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    for name in ("google/gemini-2.5-flash", "gemini-2.5-flash"):
        model = models.model_from_name(name)
        assert (model.provider, model.api) == ("google", "google-generative-ai")
    with pytest.raises(models.ModelError, match="set GEMINI_API_KEY in the kernel"):
        models.check_api_key(model)
    monkeypatch.setenv("GEMINI_API_KEY", "AIza" + "x" * 35)
    models.check_api_key(model)


def test_catalogue_id_and_bad_names() -> None:
    assert models.model_from_name("gpt-4.1-mini").provider == "openai"
    with pytest.raises(models.ModelError, match="unknown model"):
        models.model_from_name("no-such-model")
    with pytest.raises(models.ModelError, match="not a Model"):
        models.model_from_name("x", {"x": 3})


def test_options_parse_and_errors() -> None:
    options = parse_options("--model demo --max-turns 3 --tools a b --thinking low --step")
    assert (options.model, options.max_turns, options.tools) == ("demo", 3, ["a", "b"])
    assert options.step and options.thinking == "low"
    with pytest.raises(OptionsError) as error:
        parse_options("--thinking extreme")
    assert not error.value.is_help and "invalid choice" in str(error.value)
    with pytest.raises(OptionsError) as helped:
        parse_options("--help")
    assert helped.value.is_help and "usage: %%agent" in str(helped.value)
    with pytest.raises(OptionsError, match="cannot parse"):
        parse_options('--system "unclosed')


def test_expand_like_ipython() -> None:
    assert magic.expand("{a} {a + 1} {{x}} $a {a!r} {s[1:3]}", {"a": 1, "s": "abcd"}) == (
        "1 2 {x} $a 1 bc"
    )
    with pytest.raises(ExpansionError, match=r"cannot expand \{missing\}: NameError"):
        magic.expand("{missing} fails", {})
    with pytest.raises(ExpansionError, match="cannot expand the prompt: Single '}'"):
        magic.expand("a } b", {})


def test_expand_evaluates_each_expression_once() -> None:
    calls: list[int] = []

    def tick() -> int:
        calls.append(1)
        return len(calls)

    with pytest.raises(ExpansionError, match=r"\{nope\}"):
        magic.expand("{tick()} {nope}", {"tick": tick})
    assert calls == [1]
    assert magic.expand("{tick()} and {tick()}", {"tick": tick}) == "2 and 3"


def test_empty_tools_is_an_error() -> None:
    for line in ("--tools ,,", "--tools ''", "--tools , ,"):
        with pytest.raises(OptionsError, match="--tools names no tool"):
            parse_options(line)
    assert parse_options("--tools a,,b").tools == ["a", "b"]
    assert parse_options("").tools == []


async def test_demo_tour_never_runs_out() -> None:
    agent = Agent(model=models.demo_model())
    for i in range(len(models.DEMO_TOUR) + 2):
        await agent.prompt(f"question {i}")
    replies = [m for m in agent.state.messages if m.role == "assistant"]
    assert [r.stop_reason for r in replies] == ["stop"] * len(replies)
    assert "ANTHROPIC_API_KEY" in replies[0].content[0].text  # type: ignore[union-attr]
    assert replies[-1].content[0].text == models.DEMO_DONE  # type: ignore[union-attr]


async def test_demo_tour_points_to_local_servers() -> None:
    """The keyless tour says how to use a local server: llama.cpp's llama-server, a Model."""
    first = models.DEMO_TOUR[0]
    assert "llama-server" in first and 'base_url="http://127.0.0.1:8080/v1"' in first
    assert "Model(" in first and "%%agent --model local" in first
    assert "llama-server" in models.DEMO_DONE
