"""The agent may not end (or fork) the kernel: run_python refuses, user cells are untouched.

A real kernel (jupyter_client) of its own: before the guard, the first of these calls ended it.
The kernel runs in its own session, so a signal to its process group reaches only the kernel.
"""

from __future__ import annotations

import json
import signal

from .conftest import Kernel
from .test_kernel_tools import results, script

DEADLY = [
    "exit()",
    "quit()",
    "get_ipython().ask_exit()",
    "import os\nos._exit(0)",
    "import os\nos.abort()",
    "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)",
    "import os, signal\nos.kill(0, signal.SIGKILL)",
    "import os, signal\nos.kill(-os.getpgrp(), signal.SIGTERM)",
    "import os, signal\nos.killpg(os.getpgrp(), signal.SIGTERM)",
    "import signal\nsignal.raise_signal(signal.SIGTERM)",
    "import signal, threading\nsignal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)",
    "import os\ntry:\n    os._exit(3)\nexcept BaseException:\n    pass\ncaught = True",
]


def test_run_python_may_not_end_or_fork_the_kernel(kernel: Kernel) -> None:
    calls = ", ".join(f"calls(('run_python', {{'code': {code!r}}}))" for code in DEADLY)
    fork = "calls(('run_python', {'code': 'import os\\npid = os.fork()'}))"
    script(kernel, "g1", f"[{calls}, {fork}, reply('still here')]")
    run = kernel.ok("%%agent --tools notebook\nTry to stop the kernel")
    assert run.stdout.endswith("assistant: still here\n")
    found = results(kernel)
    assert [r["error"] for r in found] == [True] * (len(DEADLY) + 1)
    texts = [r["text"].splitlines()[0] for r in found]
    assert all(t.startswith("refused: the agent may not end the kernel (") for t in texts[:-1])
    assert texts[0] == "refused: the agent may not end the kernel (exit() / quit() / ask_exit())"
    assert texts[3] == "refused: the agent may not end the kernel (os._exit())"
    assert texts[-1] == (
        "refused: the agent may not fork the kernel (os.fork()); start programs with subprocess"
    )
    # A caught refusal still fails the call, and the code went on after it.
    assert found[len(DEADLY) - 1]["diff"]["created"] == ["caught"]
    assert "pid" not in kernel.ok("print(dir())").stdout
    # The kernel did not shut down after the cell either (exit() ends it once the cell is over).
    assert kernel.ok("print('alive')").stdout == "alive\n"
    assert kernel.ok("print(get_ipython().exit_now)").stdout == "False\n"


def test_user_cells_and_harmless_calls_are_not_refused(kernel: Kernel) -> None:
    kernel.ok(
        "import os, signal\n"
        "got = []\n"
        "signal.signal(signal.SIGUSR1, lambda signum, frame: got.append(signum))\n"
        "os.kill(os.getpid(), signal.SIGUSR1)\n"  # a user cell may signal its kernel
        "os.kill(os.getpid(), 0)"
    )
    assert kernel.ok("print(got == [signal.SIGUSR1])").stdout == "True\n"
    script(
        kernel,
        "g2",
        "[calls(('run_python', {'code': 'import os\\nos.kill(os.getpid(), 0)\\nprobe = 1'})),"
        " calls(('run_python', {'code': 'import os, signal\\n'"
        "'os.kill(os.getpid(), signal.SIGUSR1)'})),"
        " calls(('run_python', {'code': 'import subprocess\\n'"
        "'subprocess.run([\"true\"], check=True)'})),"
        " reply('ok')]",
    )
    kernel.ok("%%agent --tools notebook\nProbe")
    probe, signalled, started = results(kernel)
    assert not probe["error"]  # signal 0 only asks whether the process exists
    assert not started["error"], started["text"]  # programs may still be started
    assert signalled["error"] and signalled["text"].startswith("refused: the agent may not end")
    assert json.loads(kernel.ok("print(json.dumps(got))").stdout) == [int(signal.SIGUSR1)]
