"""The notebook context, the default system prompt and run_python's figures in a real kernel,
on faux models that record every request they are sent (issue 27, sections 1 to 3)."""

from __future__ import annotations

import json

from pi_notebook.notebook.system_prompt import DEFAULT_SYSTEM_PROMPT

from .conftest import Kernel

KEY = "sk-proj-" + "Q9w8E7r6" * 6

SETUP = """
import json
import pi_notebook.notebook as pn
from pi_notebook.ai import (
    faux_assistant_message, faux_tool_call, message_text, register_faux_provider,
)

def recording(seen, replies):
    '''Faux replies that keep each request's system prompt and messages, as sent.'''
    def respond(reply):
        def answer(context, options, state, model):
            seen.append({
                'system': context.system_prompt,
                'messages': [
                    {'role': m.role, 'text': message_text(m),
                     'blocks': [b.type for b in m.content] if isinstance(m.content, list) else []}
                    for m in context.messages
                ],
            })
            return reply
        return answer
    return [respond(r) for r in replies]

def request(seen, n=-1):
    print(json.dumps(seen[n]))
"""


def start(kernel: Kernel, name: str, replies: str) -> None:
    """Faux provider ``name`` (requests kept in ``name_seen``), a fresh default conversation."""
    kernel.ok(SETUP)
    kernel.ok(
        f"{name} = register_faux_provider(token_size=(1, 1))\n"
        f"{name}_seen = []\n"
        f"{name}.set_responses(recording({name}_seen, {replies}))\n"
        f"pn.use_model({name})"
    )
    kernel.ok("%%agent --new --no-context\nstart")  # a fresh conversation, its cursor set
    kernel.ok("%agent notebook-context on")  # the test kernels have PI_NOTEBOOK_CONTEXT=off


def sent(kernel: Kernel, name: str, n: int = -1) -> dict[str, object]:
    text = kernel.ok(f"request({name}_seen, {n})").stdout
    return dict(json.loads(text))


def texts(request: dict[str, object]) -> str:
    return "\n".join(str(m["text"]) for m in request["messages"])  # type: ignore[attr-defined,index]


ANSWERS = "[faux_assistant_message(f'answer {i}') for i in range(8)]"


def test_the_keyerror_and_the_failing_line_reach_the_first_request(kernel: Kernel) -> None:
    start(kernel, "k1", ANSWERS)
    kernel.ok("data = {'age': [50, 61], 'bp': [1, 2]}")
    failed = kernel.run("data['BMI']")
    assert failed.error is not None and failed.error["ename"] == "KeyError"
    kernel.ok("%%agent\nwhy did the cell above fail?")
    request = sent(kernel, "k1")
    messages = request["messages"]
    assert [m["role"] for m in messages][-2:] == ["user", "user"]  # type: ignore[index]
    context = messages[-2]["text"]  # type: ignore[index]
    assert context.startswith("Notebook context: the cells run since your last reply")
    assert "data = {'age': [50, 61], 'bp': [1, 2]}" in context
    assert "```python\ndata['BMI']\n```" in context
    assert "KeyError: 'BMI'" in context
    assert "cell, line 1, in <module>: data['BMI']" in context
    assert messages[-1]["text"] == "why did the cell above fail?"  # type: ignore[index]
    # The transcript reads as before: the context is the model's, not a line of the run.
    assert kernel.ok("%agent history").stdout.count("why did the cell above fail?") == 1
    status = kernel.ok("%agent status").stdout
    assert "notebook context: on, up to 8000 characters a run; last sent: 2 cells" in status
    assert "an error in In [" in status


def test_a_cell_between_two_agent_cells_reaches_the_second_once(kernel: Kernel) -> None:
    start(kernel, "k2", ANSWERS)
    kernel.ok("before_first = 1")
    kernel.ok("%%agent\nfirst")
    kernel.ok("between = 42\nbetween * 2")
    kernel.ok("%%agent\nsecond")
    request = sent(kernel, "k2")
    context = request["messages"][-2]["text"]  # type: ignore[index]
    assert "between = 42" in context and "Out[" in context and ": 84" in context
    assert "before_first" not in context  # sent with the first run, not again
    assert texts(request).count("before_first = 1") == 1  # once, in the history
    assert "%%agent" not in texts(request) and "first\n```" not in texts(request)


def test_a_megabyte_error_costs_the_request_under_10_kb(kernel: Kernel) -> None:
    start(kernel, "k3", ANSWERS)
    assert kernel.run("raise ValueError('x' * 1_000_000)").error is not None
    kernel.ok("%%agent\nwhat happened?")
    request = sent(kernel, "k3")
    size = len(str(request["system"])) + len(texts(request))
    assert size < 10_000, size
    assert "ValueError: xxxx" in texts(request) and "characters cut" in texts(request)


def test_a_secret_printed_or_returned_by_a_cell_never_reaches_the_model(kernel: Kernel) -> None:
    start(kernel, "k4", ANSWERS)
    kernel.ok(f"token = '{KEY}'\nprint(token)")
    kernel.ok("token")
    kernel.ok("{'auth': token}")
    kernel.ok("%%agent\nwhat is in the notebook?")
    everything = kernel.ok("print(json.dumps(k4_seen))").stdout
    assert KEY not in everything
    assert "[redacted" in texts(sent(kernel, "k4"))


def test_no_context_sends_none_and_the_setting_turns_it_off(kernel: Kernel) -> None:
    start(kernel, "k5", ANSWERS)
    kernel.ok("quiet = 'not for the model'")
    kernel.ok("%%agent --no-context\nhello")
    request = sent(kernel, "k5")
    assert "not for the model" not in texts(request)
    assert request["messages"][-1]["text"] == "hello"  # type: ignore[index]
    kernel.ok("later = 'skipped, never sent'")
    assert "notebook context: off" in kernel.ok("%agent notebook-context off").stdout
    assert "notebook context: off" in kernel.ok("%agent status").stdout
    kernel.ok("%%agent\nagain")
    assert "skipped, never sent" not in texts(sent(kernel, "k5"))
    assert "notebook context: on" in kernel.ok("%agent notebook-context on").stdout
    kernel.ok("back = 'sent again'")
    kernel.ok("%%agent\nonce more")
    last = texts(sent(kernel, "k5"))
    assert "back = 'sent again'" in last and "quiet" not in last and "skipped" not in last
    bad = kernel.run("%agent notebook-context maybe")
    assert bad.error is not None and "expected on or off" in bad.error["evalue"]


def test_the_default_system_prompt_is_there_and_system_replaces_it(kernel: Kernel) -> None:
    start(kernel, "k6", ANSWERS)
    assert sent(kernel, "k6")["system"] == DEFAULT_SYSTEM_PROMPT
    status = kernel.ok("%agent status").stdout
    assert "system prompt: the default (pi_notebook.notebook.system_prompt)" in status
    kernel.ok("%%agent --system 'Be terse.'\nhi")
    assert sent(kernel, "k6")["system"] == "Be terse."
    assert 'system prompt: "Be terse." (9 characters)' in kernel.ok("%agent status").stdout


def test_err_expands_to_the_last_error(kernel: Kernel) -> None:
    start(kernel, "k7", ANSWERS)
    kernel.run("[1, 2][5]")
    kernel.ok("%%agent --no-context\nExplain:\n{Err}")
    prompt = sent(kernel, "k7")["messages"][-1]["text"]  # type: ignore[index]
    assert prompt.startswith("Explain:\nTraceback (most recent call last):")
    assert prompt.endswith("IndexError: list index out of range")


PLOT = (
    "import matplotlib.pyplot as plt\\n"
    "fig, ax = plt.subplots()\\n"
    "for k in range(3):\\n    ax.plot([0, 1], [k, k + 1])\\n"
    "plt.show()"
)


def test_a_figure_from_run_python_reaches_the_model_as_an_image_and_not_the_cell(
    kernel: Kernel,
) -> None:
    replies = (
        "[faux_assistant_message([faux_tool_call('run_python', "
        f"{{'code': '{PLOT}'}})], stop_reason='toolUse'), faux_assistant_message('a plot')]"
    )
    start(kernel, "k8", "[faux_assistant_message('ready')] + " + replies)
    result = kernel.ok("%%agent --tools notebook --no-code-cell\nplot three lines")
    assert not any("image/png" in out.get("data", {}) for out in result.outputs)
    assert "a figure was drawn: 1 axes, 3 lines" in result.stdout
    request = sent(kernel, "k8")
    tool_result = request["messages"][-1]  # type: ignore[index]
    assert tool_result["role"] == "toolResult" and tool_result["blocks"] == ["text", "image"]
    card = kernel.ok(
        "print([b.type for b in pn.session().default.state.messages[-2].content])"
    ).stdout
    assert card == "['text', 'image']\n"  # the tool result the card renders holds the image
