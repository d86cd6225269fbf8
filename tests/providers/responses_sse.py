"""OpenAI Responses-API SSE streams for the tests, in the shapes of OpenAI's API reference
(``event: <type>`` + ``data: {"type": <type>, ...}``, with ``sequence_number``s)."""

from __future__ import annotations

import json
from typing import Any

from pi_notebook.ai import Model, ModelCost

from .server import named_sse

ENCRYPTED = "gAAAAABoISQ24OyVRYbkYfukLEr2ujAbHJXo1ktRjNcLhYj7wNvuZ0ux3ZHOvjAGs8U3nbdH4F2Pdb"
"""An ``encrypted_content`` as OpenAI returns it (a Fernet token)."""

USAGE = {
    "input_tokens": 120,
    "input_tokens_details": {"cached_tokens": 100},
    "output_tokens": 40,
    "output_tokens_details": {"reasoning_tokens": 25},
    "total_tokens": 160,
}


def responses_model(base_url: str, **fields: Any) -> Model:
    data: dict[str, Any] = {
        "id": "o4-test",
        "api": "openai-responses",
        "provider": "openai",
        "base_url": base_url + "/v1",
        "reasoning": True,
        "thinking_level_map": {"off": None, "minimal": None, "xhigh": None, "max": None},
        "input": ["text", "image"],
        "cost": ModelCost(input=1.1, output=4.4, cache_read=0.275, cache_write=0),
        "context_window": 200000,
        "max_tokens": 100000,
        "compat": {"supportsStrictMode": True},
    }
    data.update(fields)
    return Model(**data)


class Stream:
    """Builds one response's events, numbering them as the API does."""

    def __init__(self, response_id: str = "resp_1") -> None:
        self.response_id = response_id
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.output: list[dict[str, Any]] = []

    def add(self, kind: str, **fields: Any) -> Stream:
        self.events.append((kind, {"type": kind, "sequence_number": len(self.events), **fields}))
        return self

    def response(self, status: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": self.response_id,
            "object": "response",
            "created_at": 1741290958,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "model": "o4-mini-2025-04-16",
            "output": list(self.output),
            "usage": None,
            **fields,
        }

    def created(self) -> Stream:
        self.add("response.created", response=self.response("in_progress"))
        return self.add("response.in_progress", response=self.response("in_progress"))

    def reasoning(self, index: int, *summaries: str, item_id: str = "rs_1") -> Stream:
        self.add(
            "response.output_item.added",
            output_index=index,
            item={"id": item_id, "type": "reasoning", "summary": []},
        )
        for n, text in enumerate(summaries):
            part = {"type": "summary_text", "text": ""}
            common = {"item_id": item_id, "output_index": index, "summary_index": n}
            self.add("response.reasoning_summary_part.added", **common, part=part)
            for piece in _pieces(text, 5):
                self.add("response.reasoning_summary_text.delta", **common, delta=piece)
            self.add("response.reasoning_summary_text.done", **common, text=text)
            done = {"type": "summary_text", "text": text}
            self.add("response.reasoning_summary_part.done", **common, part=done)
        item = {
            "id": item_id,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": t} for t in summaries],
            "encrypted_content": ENCRYPTED,
        }
        self.output.append(item)
        return self.add("response.output_item.done", output_index=index, item=item)

    def message(
        self, index: int, text: str, item_id: str = "msg_1", refusal: bool = False
    ) -> Stream:
        self.add(
            "response.output_item.added",
            output_index=index,
            item={
                "id": item_id,
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            },
        )
        common = {"item_id": item_id, "output_index": index, "content_index": 0}
        if refusal:
            part = {"type": "refusal", "refusal": text}
            self.add("response.content_part.added", **common, part={**part, "refusal": ""})
            for piece in _pieces(text, 4):
                self.add("response.refusal.delta", **common, delta=piece)
            self.add("response.refusal.done", **common, refusal=text)
        else:
            part = {"type": "output_text", "text": text, "annotations": []}
            self.add("response.content_part.added", **common, part={**part, "text": ""})
            for piece in _pieces(text, 4):
                self.add("response.output_text.delta", **common, delta=piece, logprobs=[])
            self.add("response.output_text.done", **common, text=text, logprobs=[])
        self.add("response.content_part.done", **common, part=part)
        item = {
            "id": item_id,
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [part],
        }
        self.output.append(item)
        return self.add("response.output_item.done", output_index=index, item=item)

    def function_call(
        self, index: int, name: str, arguments: str, call_id: str = "call_1", item_id: str = "fc_1"
    ) -> Stream:
        item = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "call_id": call_id,
            "name": name,
            "arguments": "",
        }
        self.add("response.output_item.added", output_index=index, item=item)
        for piece in _pieces(arguments, 3):
            self.add(
                "response.function_call_arguments.delta",
                item_id=item_id,
                output_index=index,
                delta=piece,
            )
        self.add(
            "response.function_call_arguments.done",
            item_id=item_id,
            output_index=index,
            arguments=arguments,
        )
        done = {**item, "status": "completed", "arguments": arguments}
        self.output.append(done)
        return self.add("response.output_item.done", output_index=index, item=done)

    def completed(self, usage: dict[str, Any] | None = None) -> Stream:
        response = self.response("completed", usage=usage or USAGE)
        return self.add("response.completed", response=response)

    def incomplete(self, reason: str = "max_output_tokens") -> Stream:
        response = self.response("incomplete", incomplete_details={"reason": reason}, usage=USAGE)
        return self.add("response.incomplete", response=response)

    def failed(self, code: str, message: str) -> Stream:
        response = self.response("failed", error={"code": code, "message": message})
        return self.add("response.failed", response=response)

    def body(self) -> bytes:
        return named_sse(*self.events)


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def reasoning_item(*summaries: str, item_id: str = "rs_1") -> str:
    """The compact JSON of a reasoning item, as a thinking signature holds it."""
    item = {
        "id": item_id,
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": t} for t in summaries],
        "encrypted_content": ENCRYPTED,
    }
    return json.dumps(item, separators=(",", ":"))
