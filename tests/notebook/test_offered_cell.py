"""Issue 28, items 1-4: the offered code cell holds the code that ran and comments that cannot run.

In a real kernel (interactive mode), a scripted model gives tool calls whose ids, expressions
and namespace names carry line breaks of every kind Python or an editor knows. The cell offered
in the ``execute_reply`` must be exactly the run's executed code (compared as ``ast`` trees) plus
comments; running it must not do what the hostile text asked. What the model was sent (the faux
model's recorded context) keeps the ids as they were: only the cell is sanitised.
"""

from __future__ import annotations

import ast
import io
import json
import tokenize
from pathlib import Path
from typing import Any

from pi_notebook.notebook.code_cell import CELL_HEADER, REDACTED

from .conftest import Kernel

#: Every character Python (``\n``, ``\r``) or an editor (the rest) breaks a line at.
LINE_BREAKS = [
    "\n",
    "\r",
    "\r\n",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x85",
    "\u2028",
    "\u2029",
]

SETUP = """\
import json
import pi_notebook.notebook as pn
from pi_notebook.ai import faux_assistant_message as reply, faux_tool_call as call
from pi_notebook.ai import register_faux_provider

received = []

def record(text):
    def respond(context, options, state, model):
        received.append([m.to_json_dict() for m in context.messages])
        return reply(text)
    return respond

def calls(*items):
    return reply([call(name, args, id=i) for i, name, args in items], stop_reason='toolUse')
"""

AGENT_CELL = "%%agent --tools notebook\nDo it."


def _execute(kernel: Kernel, code: str) -> dict[str, Any]:
    reply = kernel.kc.execute_interactive(code, timeout=90, output_hook=lambda msg: None)
    content: dict[str, Any] = reply["content"]
    assert content["status"] == "ok", content
    return content


def _offered_text(content: dict[str, Any]) -> str:
    (payload,) = [p for p in content.get("payload", []) if p.get("source") == "set_next_input"]
    assert payload["replace"] is False
    text = payload["text"]
    assert isinstance(text, str)
    return text


def _script(kernel: Kernel, name: str, script: str, clean: tuple[str, ...]) -> None:
    kernel.ok("%agent reset")  # each test its own conversation
    kernel.ok(
        SETUP + f"{name} = register_faux_provider(token_size=(1, 1))\n"
        f"{name}.set_responses({script})\npn.use_model({name})\n"
        f"for _name in {clean!r}:\n    globals().pop(_name, None)\n"
    )


def _code_lines(text: str) -> list[str]:
    """The cell's lines that hold code once comments are taken out (by Python's tokenizer)."""
    kept: list[str] = []
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    rows = {tok.start[0] for tok in tokens if tok.type not in _NOT_CODE}
    lines = text.splitlines(keepends=False)
    for row in sorted(rows):
        if 0 < row <= len(lines):
            kept.append(lines[row - 1])
    return kept


_NOT_CODE = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.ENDMARKER,
    tokenize.INDENT,
    tokenize.DEDENT,
}


def _received(kernel: Kernel) -> list[dict[str, Any]]:
    """The context of the run's last request, as the faux model received it."""
    (context,) = json.loads(kernel.ok("print(json.dumps(received))").stdout)
    assert isinstance(context, list)
    return context


def _calls(context: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        block
        for message in context
        if message["role"] == "assistant"
        for block in message["content"]
        if block["type"] == "toolCall"
    ]


def _run_script(calls: list[tuple[str, str, dict[str, Any]]]) -> str:
    """A faux script: one reply per call, then a reply that records what it was sent."""
    items = "".join(f"    calls(({i!r}, {n!r}, {a!r})),\n" for i, n, a in calls)
    return f"[\n{items}    record('Done.'),\n]"


# -- in a kernel ---------------------------------------------------------------------------------


def test_a_tool_call_id_with_line_breaks_never_becomes_code(
    ui_kernel: Kernel, tmp_path: Path
) -> None:
    """Item 1 (and 3): ids that end the comment's line, of every line-break kind."""
    target = tmp_path / "pwned.txt"
    breaks = ["\n", "\r", "\u2028", "\x85", "\x0c"]
    hostile = [f"c{n}){br}open({str(target)!r},'w').write('x'){br}#" for n, br in enumerate(breaks)]
    calls = [(ident, "run_python", {"code": f"x{n} = {n}"}) for n, ident in enumerate(hostile)]
    calls.append(("c9", "set_variable", {"name": "r", "expression": "range(x1)"}))
    names = (*[f"x{n}" for n in range(len(hostile))], "r")
    _script(ui_kernel, "oc1", _run_script(calls), names)
    text = _offered_text(_execute(ui_kernel, AGENT_CELL))

    # What the user sees: the tool and the call's number, never the provider's id.
    assert text.startswith(CELL_HEADER + "\n")
    assert "open(" not in text and "pwned" not in text
    assert "# run_python (call 1)\nx0 = 0" in text and "# set_variable (call 6)" in text
    for line in text.splitlines():
        assert line.isprintable(), repr(line)
    assert _code_lines(text) == [f"x{n} = {n}" for n in range(len(hostile))] + ["r = range(x1)"]

    # The cell is exactly the code that ran: the same tree as the run's executed calls (as the
    # model sent them; set_variable runs ``NAME = (\nEXPRESSION\n)``).
    context = _received(ui_kernel)
    executed = _calls(context)
    assert [c["name"] for c in executed] == ["run_python"] * len(hostile) + ["set_variable"]
    ran = [
        c["arguments"]["code"]
        if c["name"] == "run_python"
        else f"{c['arguments']['name']} = (\n{c['arguments']['expression']}\n)"
        for c in executed
    ]
    assert ast.dump(ast.parse(text)) == ast.dump(ast.parse("\n".join(ran)))

    # Running the offered cell does only that: the file the ids asked for is not written.
    ui_kernel.ok(text)
    assert not target.exists()
    assert ui_kernel.ok("print(x4, list(r))").stdout == "4 [0]\n"

    # What was sent: the model got its own ids back, unchanged (only the cell is sanitised).
    sent_ids = [m["toolCallId"] for m in context if m["role"] == "toolResult"]
    assert sent_ids == [*hostile, "c9"]


def test_a_set_variable_expression_with_a_line_break_is_not_echoed(
    ui_kernel: Kernel, tmp_path: Path
) -> None:
    """Item 2: the expression ran as a value (a literal is written), its text in a comment
    would end the comment at the carriage return and run the rest."""
    target = tmp_path / "pwned2.txt"
    ui_kernel.ok(f"def pwn():\n    open({str(target)!r}, 'w').write('x')")
    payload = "pwn()#"  # short: an expression under 100 characters was echoed
    breaks = ["\r", "\x0b", "\u2028"]
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("c1", "run_python", {"code": "xs = [1, 2, 3]"})
    ]
    for n, br in enumerate(breaks):
        expression = 'len(xs) if 1 else """' + br + payload + '"""'
        calls.append((f"s{n}", "set_variable", {"name": f"n{n}", "expression": expression}))
    calls.append(("t", "set_variable", {"name": "t", "expression": "len(xs) * 2"}))
    _script(ui_kernel, "oc2", _run_script(calls), ("xs", "n0", "n1", "n2", "t"))
    text = _offered_text(_execute(ui_kernel, AGENT_CELL))

    assert "pwn" not in text
    assert _code_lines(text) == [
        "xs = [1, 2, 3]",
        "n0 = 3",
        "n1 = 3",
        "n2 = 3",
        "t = 6  # len(xs) * 2",
    ]
    assert len(text.splitlines()) == text.count("\n")  # no line break but "\n" in the cell
    ui_kernel.ok(text)
    assert not target.exists()

    # The model was sent back the calls it made, expressions untouched.
    sent = _calls(_received(ui_kernel))
    expressions = [c["arguments"]["expression"] for c in sent if c["name"] == "set_variable"]
    assert [e.count(payload) for e in expressions] == [1, 1, 1, 0]


def test_a_redacted_value_names_the_variables_that_will_differ(ui_kernel: Kernel) -> None:
    """Item 4: the cell's ``tok`` holds the marker, and the comment says so by name."""
    token = "ghp_" + "A1b2C3d4E5" * 4
    code = f"tok = {token!r}\nheaders = {{'Authorization': 'token ' + tok}}\nn = 2"
    script = _run_script(
        [("c1", "run_python", {"code": code}), ("c2", "run_python", {"code": "m = n + 1"})]
    )
    _script(ui_kernel, "oc3", script, ("tok", "headers", "n", "m"))
    text = _offered_text(_execute(ui_kernel, AGENT_CELL))
    assert token not in text
    assert (
        f"# run_python (call 1); {REDACTED}; tok will not get the agent's values\n"
        "tok = '[redacted: " in text
    )
    assert "# run_python (call 2)\nm = n + 1" in text  # no secret: no note
    context = _received(ui_kernel)
    assert [m["toolCallId"] for m in context if m["role"] == "toolResult"] == ["c1", "c2"]
    assert _calls(context)[0]["arguments"]["code"] == code  # the model's own code, unredacted


SERVER = """
from tests.providers.server import ScriptServer, sse, stream_bytes
from pi_notebook.ai import Model
import json as _json
ids_server = ScriptServer()
await ids_server.start()
call = {"index": 0, "id": HOSTILE_ID, "type": "function",
        "function": {"name": "run_python", "arguments": _json.dumps({"code": "y = 7"})}}
calling = sse(
    {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
)
done = sse(
    {"choices": [{"index": 0, "delta": {"content": "Set."}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
)
ids_server.queue(stream_bytes(calling), stream_bytes(done))
passing = Model(id="local-gguf", api="openai-completions", provider="llamacpp",
                base_url=ids_server.url + "/v1")
"""


def test_a_servers_tool_call_id_never_becomes_code(ui_kernel: Kernel, tmp_path: Path) -> None:
    """Item 1: openai-completions passes a server's ids through; the cell does not."""
    target = tmp_path / "pwned-by-server.txt"
    hostile = f"call_1\nopen({str(target)!r},'w').write('x')\n#"
    ui_kernel.ok("%agent reset")
    ui_kernel.ok(f"HOSTILE_ID = {hostile!r}\n" + SERVER)
    try:
        content = _execute(
            ui_kernel, "%%agent --model passing --new --tools notebook --approve none\nSet y."
        )
        bodies = json.loads(
            ui_kernel.ok(
                "import json\nprint(json.dumps([r.json() for r in ids_server.requests]))"
            ).stdout
        )
    finally:
        ui_kernel.ok("await ids_server.stop()")
    text = _offered_text(content)
    assert text == f"{CELL_HEADER}\n\n# run_python (call 1)\ny = 7\n"
    ui_kernel.ok(text)
    assert not target.exists()
    # What was sent back: the server's own id, in the call and in its result.
    second = bodies[1]["messages"]
    assert [c["id"] for m in second for c in m.get("tool_calls") or []] == [hostile]
    assert [m["tool_call_id"] for m in second if m["role"] == "tool"] == [hostile]
