"""The default system prompt: what a conversation is told when no ``--system`` is given.

One constant, :data:`DEFAULT_SYSTEM_PROMPT`, short enough for a small local model (under 150
tokens): where the model is (a Jupyter notebook, the user's own kernel), what the notebook
context before a message is, what the built-in tools do when it has them (and that running code
changes the user's variables), and how to answer. The notebook gives it to every conversation it
creates (the default one, ``--agent NAME`` when the variable is new, ``--new``); ``--system
TEXT`` replaces it for the conversation; an ``Agent`` the user made keeps its own.

This module holds text only (and how ``%agent status`` names it): it never reads the notebook
or the environment.
"""

from __future__ import annotations

from .resume_checks import prompt_preview

DEFAULT_SYSTEM_PROMPT = """\
You are an assistant in a Jupyter notebook, in the user's own Python kernel.
A message may start with notebook context: the cells the user ran since your last reply \
(In [n]), their results (Out[n]) and errors.
With tools: list_variables and inspect_variable read the user's variables; notebook_cells and \
last_error show cells and the full traceback; run_python and set_variable run code in the \
user's kernel and change their variables, so run code only when it helps.
Answer in Markdown, briefly; put code in fenced ```python blocks."""
"""The system prompt of a conversation the notebook creates (``--system TEXT`` replaces it)."""


DEFAULT_SHOWN = "the default (pi_notebook.notebook.system_prompt)"
"""How ``%agent status`` names it."""


def system_prompt_text(prompt: str) -> str:
    """Which system prompt is in force (``%agent status``): the default, or the start of the
    conversation's own."""
    return DEFAULT_SHOWN if prompt == DEFAULT_SYSTEM_PROMPT else prompt_preview(prompt)


__all__ = ["DEFAULT_SHOWN", "DEFAULT_SYSTEM_PROMPT", "system_prompt_text"]
