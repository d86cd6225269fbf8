"""Pure units: the SSE decoder under any chunking, the catalogue, keys, redaction."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_notebook.ai.providers import catalog, keys
from pi_notebook.ai.providers._driver import redact
from pi_notebook.ai.providers._errors import event_text, format_http_error
from pi_notebook.ai.providers._json import loads
from pi_notebook.ai.providers._sse import EventTooLarge, SSEDecoder, format_size

STREAM = (
    ": hello\r\n"
    "event: delta\r\n"
    'data: {"t": "Grüße 🌍"}\r\n'
    "\r\n"
    "data: line one\n"
    "data: line two\n"
    "\n"
    "data:nospace\r\r"
    "id: 7\n"
    "retry: 100\n"
    "data\n"
    "\n"
    "event: only-event\n\n"
    "data: tail"
).encode()
EXPECTED = [
    ("delta", '{"t": "Grüße 🌍"}'.encode()),
    ("message", b"line one\nline two"),
    ("message", b"nospace"),
    ("message", b""),
    ("message", b"tail"),
]


def decode(chunks: list[bytes]) -> list[tuple[str, bytes]]:
    decoder = SSEDecoder()
    out = []
    for c in chunks:
        out.extend(decoder.feed(c))
    out.extend(decoder.flush())
    return out


def test_sse_whole() -> None:
    assert decode([STREAM]) == EXPECTED


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=30))
def test_sse_any_split(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    assert decode(chunks) == EXPECTED


def test_sse_byte_by_byte() -> None:
    assert decode([bytes([b]) for b in STREAM]) == EXPECTED


def test_catalog_lookup_and_resolution() -> None:
    providers = {m.provider for m in catalog.list_models()}
    assert providers == {
        "openai",
        "anthropic",
        "google",
        "openrouter",
        "groq",
        "deepseek",
        "ollama",
    }
    m = catalog.get_model("openai", "gpt-4o-mini")
    assert m.api == "openai-responses" and m.base_url == "https://api.openai.com/v1"
    assert m.cost.input == 0.15 and m.context_window == 128000 and "image" in m.input
    a = catalog.get_model("anthropic", "claude-sonnet-4-5")
    assert a.api == "anthropic-messages" and a.reasoning and a.cost.cache_write == 3.75
    assert catalog.resolve_model("openai/gpt-4o-mini") == m
    o = catalog.resolve_model("ollama/qwen2.5:7b")
    assert o.base_url == "http://localhost:11434/v1" and o.provider == "ollama"
    custom = catalog.resolve_model("ollama/some-new-model:3b")
    assert custom.id == "some-new-model:3b" and custom.api == "openai-completions"
    assert custom.base_url == "http://localhost:11434/v1"
    r = catalog.resolve_model("openrouter/anthropic/claude-sonnet-4.5")
    assert r.id == "anthropic/claude-sonnet-4.5" and r.provider == "openrouter"
    assert (
        catalog.resolve_model("ollama/x", base_url="http://gpu:1/v1").base_url == "http://gpu:1/v1"
    )
    with pytest.raises(KeyError):
        catalog.get_model("openai", "nope")
    with pytest.raises(KeyError):
        catalog.resolve_model("nobody/model")
    with pytest.raises(ValueError):
        catalog.resolve_model("no-slash")
    # copies: mutating one does not change the catalogue
    m.cost.input = 99
    assert catalog.get_model("openai", "gpt-4o-mini").cost.input == 0.15


def test_keys_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for provider, var in [
        ("openai", "OPENAI_API_KEY"),
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("openrouter", "OPENROUTER_API_KEY"),
        ("groq", "GROQ_API_KEY"),
        ("deepseek", "DEEPSEEK_API_KEY"),
    ]:
        monkeypatch.setenv(var, f"key-for-{provider}")
        assert keys.get_env_api_key(provider) == f"key-for-{provider}"
        assert keys.resolve_api_key(provider, "explicit") == "explicit"
    assert not keys.requires_api_key("ollama")
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    assert keys.env_var_names("ollama") == ("OLLAMA_API_KEY",)
    assert keys.get_env_api_key("ollama") is None
    monkeypatch.setenv("OLLAMA_API_KEY", "  ")  # blank counts as unset
    assert keys.get_env_api_key("ollama") is None
    monkeypatch.setenv("OLLAMA_API_KEY", " key-for-ollama ")
    assert keys.get_env_api_key("ollama") == "key-for-ollama"


def test_redact_forms() -> None:
    key = "sk-abc\n123456789"
    text = f"bad header b'Bearer {key!r}' and {key} and sk-abc and 123456789"
    out = redact(text, [key])
    assert key not in out and "123456789" not in out and repr(key)[1:-1] not in out


def test_http_error_formats() -> None:
    assert (
        format_http_error(429, b'{"error":{"message":"rate limit exceeded"}}', "")
        == "429: rate limit exceeded"
    )
    assert format_http_error(502, b"", "Bad Gateway") == "502: Bad Gateway"
    long = format_http_error(500, b"x" * 5000, "")
    assert long.startswith("500: xxx") and "[truncated 1000 chars]" in long


def test_capped_error_bodies_are_one_line_and_marked() -> None:
    page = b"<html>\n  <body>\n\tBad   gateway\n" + b"<p>x</p>\n" * 10_000
    text = format_http_error(502, page[:65536], "", cut=True)
    assert text.startswith("502: <html> <body> Bad gateway <p>x</p> <p>x</p>")
    assert text.endswith("... [truncated]") and "\n" not in text and len(text) < 4100
    # A cut JSON body cannot parse: its start is shown as text, less the word it cuts.
    cut_json = format_http_error(400, b'{"error": {"message": "long', "", cut=True)
    assert cut_json == '400: {"error": {"message": "... [truncated]'


def test_a_key_cut_by_a_truncation_is_not_shown_in_part() -> None:
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
    for at in range(1, len(key)):
        body = ("e" * (4000 - at) + " " + key + " tail " * 10).encode()
        text = format_http_error(401, body, "")
        assert key[: max(at - 1, 1)] not in text.partition("... [truncated")[0][-60:]
        assert text.endswith(" chars]")
        capped = format_http_error(401, body[: 4000 - at + 1 + at], "", cut=True)
        assert "sk-" not in capped
    event = ("x" * 490 + " " + key).encode()
    assert "sk-" not in event_text(event)
    assert event_text(b"short") == "short"


def test_sse_event_cap_at_its_boundary() -> None:
    decoder = SSEDecoder(max_event_bytes=10)
    assert decoder.feed(b"data: 1234") == []  # 10 bytes: at the limit, not over it
    assert decoder.feed(b"\n") == []
    assert decoder.feed(b"\ndata: 5678\n\ndata: abcd\n\n") == [
        ("message", b"1234"),
        ("message", b"5678"),
        ("message", b"abcd"),
    ]
    with pytest.raises(EventTooLarge, match="larger than the 10 bytes limit"):
        decoder.feed(b"data: 12345")  # 11 bytes, still unterminated
    with pytest.raises(EventTooLarge):
        SSEDecoder(max_event_bytes=10).feed(b"data: a\n\ndata: 12345\n\ndata: b\n\n")
    with pytest.raises(EventTooLarge):  # a big read whose tail is over the limit
        SSEDecoder(max_event_bytes=10).feed(b"data: 1\n\n" * 5 + b"data: 12345")
    with pytest.raises(EventTooLarge):  # CRLF line ends count once normalised
        SSEDecoder(max_event_bytes=10).feed(b"event: e\r\ndata: 1\r\n\r\n")
    assert [format_size(n) for n in (900, 1024, 65536, 100_000, 16 << 20, 3 << 19)] == [
        "900 bytes",
        "1 KiB",
        "64 KiB",
        "97.7 KiB",
        "16 MiB",
        "1.5 MiB",
    ]


# One-line ``data:`` events, as OpenAI-compatible servers send them: cut out in one split.
DATA_ONLY = b"".join(
    b"data: " + json.dumps({"i": i, "t": "\u00e9\U0001f30d" * (i % 3)}).encode() + b"\n\n"
    for i in range(40)
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(DATA_ONLY)), max_size=20))
def test_sse_runs_of_one_line_data_events_under_any_split(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [DATA_ONLY[a:b] for a, b in zip([0, *points], [*points, len(DATA_ONLY)], strict=True)]
    events = decode(chunks)
    assert [name for name, _ in events] == ["message"] * 40
    assert [json.loads(data)["i"] for _, data in events] == list(range(40))


@pytest.mark.parametrize(
    ("stream", "expected"),
    [
        # a comment between data events: not a run of one-line events
        (b"data: a\n\n: ping\n\ndata: b\n\n", [("message", b"a"), ("message", b"b")]),
        # a two-line data field
        (b"data: a\ndata: b\n\ndata: c\n\n", [("message", b"a\nb"), ("message", b"c")]),
        # an extra blank line, and a named event after plain ones
        (
            b"data: a\n\n\ndata: b\n\nevent: e\ndata: c\n\n",
            [("message", b"a"), ("message", b"b"), ("e", b"c")],
        ),
        # "data:" without the space is still data
        (b"data: a\n\ndata:b\n\n", [("message", b"a"), ("message", b"b")]),
        # Anthropic's event + data pairs; an empty event name is a message
        (
            b"event: ping\ndata: {}\n\nevent: \ndata: x\n\nevent: e\ndata: 1\ndata: 2\n\n",
            [("ping", b"{}"), ("message", b"x"), ("e", b"1\n2")],
        ),
    ],
)
def test_sse_mixed_events_take_the_general_path(
    stream: bytes, expected: list[tuple[str, bytes]]
) -> None:
    assert decode([stream]) == expected


def test_chunk_json_matches_the_standard_library() -> None:
    for data in [b'{"a": "\\ud800"}', b"NaN", b'{"a": 1, "a": 2}', b"1e400", b"1" * 30]:
        assert repr(loads(data)) == repr(json.loads(data))
    assert loads(b'{"t": "\xff"}') == {"t": "\ufffd"}  # invalid UTF-8 is replaced, as before
    with pytest.raises(ValueError):
        loads(b'{"a": 1')
