"""A new conversation takes the session's default model, the one ``use_model`` set (issue 28,
item 13): a user scripting a faux or local model who names a new ``--agent`` must not send the
prompt to the provider whose key happens to be in the environment."""

from __future__ import annotations

from .conftest import Kernel

FAKE_KEY = "sk-proj-" + "Q" * 40


def test_a_new_named_conversation_takes_the_model_use_model_set(kernel: Kernel) -> None:
    kernel.ok(
        "import os\n"
        f"os.environ['OPENAI_API_KEY'] = {FAKE_KEY!r}\n"
        "import pi_notebook.notebook as pn\n"
        "from pi_notebook.ai import faux_assistant_message, register_faux_provider\n"
        "faux = register_faux_provider()\n"
        "faux.set_responses([faux_assistant_message('from the faux model')] * 2)\n"
        "pn.use_model(faux)"
    )
    try:
        run = kernel.ok("%%agent --agent other\nHello?")
        assert "from the faux model" in run.stdout, run.stdout
        status = kernel.ok("%agent status").stdout
        assert "(from use_model(), the session's default)" in status, status
        assert status.startswith("model: faux/"), status
        assert FAKE_KEY not in status
        assert kernel.ok("print(faux.call_count)").stdout.strip() == "1"
    finally:
        kernel.ok("os.environ.pop('OPENAI_API_KEY', None)")
