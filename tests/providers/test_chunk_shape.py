"""The text-chunk shortcut gives exactly what a full JSON parse gives, or nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_notebook.ai import Model, empty_reply
from pi_notebook.ai.providers.chunk_shape import TextChunkShape
from pi_notebook.ai.providers.openai_completions import (
    MAX_SHAPE_ATTEMPTS,
    OpenAICompletionsDecoder,
)


def envelope(content: Any, **changes: Any) -> dict[str, Any]:
    delta = changes.pop("delta", {"content": content})
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}
    choice.update(changes.pop("choice", {}))
    return {
        "id": "chatcmpl-7",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "m",
        "choices": [choice],
        **changes,
    }


def encode(chunk: dict[str, Any], *, compact: bool, ascii_only: bool) -> bytes:
    separators = (",", ":") if compact else (", ", ": ")
    return json.dumps(chunk, separators=separators, ensure_ascii=ascii_only).encode()


def learned(*, compact: bool = True, ascii_only: bool = False) -> TextChunkShape:
    chunk = envelope("first")
    shape = TextChunkShape.learn(encode(chunk, compact=compact, ascii_only=ascii_only), chunk)
    assert shape is not None
    return shape


# Any text, with the characters that matter to a JSON string body drawn often.
TEXT = st.lists(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=3)
    | st.sampled_from(['"', "\\", "\\u", "\n", "\t", '\\"', '",', "}", "\u2028", "\x00"]),
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.booleans(), st.booleans())
def test_the_shortcut_equals_a_full_parse(content: str, compact: bool, ascii_only: bool) -> None:
    shape = learned(compact=compact, ascii_only=ascii_only)
    data = encode(envelope(content), compact=compact, ascii_only=ascii_only)
    assert shape.text_of(data) == json.loads(data)["choices"][0]["delta"]["content"] == content


@pytest.mark.parametrize(
    "changes",
    [
        {"id": "chatcmpl-8"},
        {"usage": {"prompt_tokens": 1, "completion_tokens": 2}},
        {"choice": {"finish_reason": "stop"}},
        {"delta": {"role": "assistant", "content": "x"}},
        {"delta": {"content": "x", "tool_calls": [{"index": 0}]}},
        {"delta": {"reasoning_content": "x"}},
        {"delta": {"content": None}},
        {"delta": {"content": 5}},
    ],
    ids=lambda c: next(iter(c)),
)
def test_any_other_chunk_is_left_to_the_full_parse(changes: dict[str, Any]) -> None:
    shape = learned()
    data = encode(envelope("x", **changes), compact=True, ascii_only=False)
    assert shape.text_of(data) is None


@pytest.mark.parametrize(
    "data",
    [
        b'{"id":"chatcmpl-7"}',  # shorter than head + tail
        b"",
        # the envelope around something that is not one string body
        None,
    ],
)
def test_truncated_or_broken_chunks_are_left_to_the_full_parse(data: bytes | None) -> None:
    shape = learned()
    if data is None:
        whole = encode(envelope("PLACE"), compact=True, ascii_only=False)
        for body in (b'a","b', b"a\\", b'a"', b"\\x"):
            assert shape.text_of(whole.replace(b"PLACE", body)) is None
    else:
        assert shape.text_of(data) is None


@pytest.mark.parametrize(
    "chunk",
    [
        envelope("x", delta={"role": "assistant", "content": "x"}),
        envelope("x", choice={"finish_reason": "stop"}),
        envelope("x", usage={"total_tokens": 3}),
        envelope("x", delta={"content": None}),
        {"choices": []},
        # a second "content" key (OpenAI's logprobs carry one): which is which is not guessed
        envelope("x", choice={"logprobs": {"content": [{"token": "x"}]}}),
    ],
    ids=["role", "finish", "usage", "null", "no-choice", "two-content-keys"],
)
def test_only_plain_text_chunks_are_learned(chunk: dict[str, Any]) -> None:
    assert TextChunkShape.learn(encode(chunk, compact=True, ascii_only=False), chunk) is None


def test_a_key_that_only_looks_like_content_is_not_learned() -> None:
    # The escaped key name contains the bytes "content": but is not delta.content.
    raw = b'{"x\\"content":"decoy","choices":[{"delta":{"con\\u0074ent":"decoy"}}]}'
    chunk = json.loads(raw)
    assert chunk["choices"][0]["delta"] == {"content": "decoy"}
    assert TextChunkShape.learn(raw, chunk) is None


def _decode(chunks: list[bytes]) -> tuple[OpenAICompletionsDecoder, list[Any]]:
    model = Model(id="m", api="openai-completions", provider="p", base_url="http://127.0.0.1:9")
    events: list[Any] = []
    decoder = OpenAICompletionsDecoder(model, empty_reply(model), events.append)
    finish = envelope("", choice={"finish_reason": "stop"}, delta={})
    for data in [*chunks, encode(finish, compact=True, ascii_only=False)]:
        decoder.on_event("message", data)
    decoder.on_event("message", b"[DONE]")
    decoder.finish()
    return decoder, events


def test_a_stream_whose_envelope_changes_gives_the_same_events_as_a_full_parse() -> None:
    words = [f'w{i} "q" \\ é ' for i in range(30)]
    chunks = [envelope(w, id="a" if i < 10 else "b") for i, w in enumerate(words)]
    chunks[0]["choices"][0]["delta"]["role"] = "assistant"
    chunks[20]["choices"][0]["delta"]["reasoning_content"] = "hm"  # one odd chunk
    data = [encode(c, compact=True, ascii_only=i % 2 == 0) for i, c in enumerate(chunks)]
    decoder, events = _decode(data)
    assert decoder.text_shape is not None  # the shortcut was in use
    deltas = [e.delta for e in events if e.type == "text_delta"]
    assert deltas == words
    texts = [b.text for b in events[0].partial.content if b.type == "text"]
    assert texts == ["".join(words)]
    assert [e.delta for e in events if e.type == "thinking_delta"] == ["hm"]


def test_a_server_whose_envelope_always_changes_is_studied_a_bounded_number_of_times() -> None:
    chunks = [
        encode(envelope(f"t{i}", created=i), compact=True, ascii_only=False) for i in range(40)
    ]
    decoder, events = _decode(chunks)
    assert decoder.shape_attempts == 0 and MAX_SHAPE_ATTEMPTS < 40
    assert [e.delta for e in events if e.type == "text_delta"] == [f"t{i}" for i in range(40)]


def test_a_shape_that_only_misses_is_dropped_once_studying_stops() -> None:
    """OpenAI's per-chunk ``obfuscation`` field: each chunk's envelope is learnable, and none
    matches the next; once the attempts are spent, no chunk pays for checking a dead shape."""
    chunks = [
        encode(envelope(f"t{i}", obfuscation="x" * (i % 7 + 1)), compact=True, ascii_only=False)
        for i in range(40)
    ]
    decoder, events = _decode(chunks)
    assert decoder.shape_attempts == 0 and decoder.text_shape is None
    assert [e.delta for e in events if e.type == "text_delta"] == [f"t{i}" for i in range(40)]
