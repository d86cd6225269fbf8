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


#: Routes around the first guard (issue 28, item 16): each ended the kernel, or signalled the
#: process that started it (here pytest; under JupyterLab the server with every kernel in it).
#: The parent is sent SIGWINCH, which a process ignores unless it asks for it.
AROUND = [
    ("import posix\nposix._exit(0)", "end the kernel (posix._exit())"),
    ("import _signal, signal\n_signal.raise_signal(signal.SIGTERM)", "(_signal.raise_signal())"),
    (
        "import os, threading\nt = threading.Thread(target=os._exit, args=(0,))\n"
        "t.start()\nt.join()",
        "end the kernel (os._exit())",
    ),
    (
        "import os, _thread, threading\ndone = threading.Event()\n"
        "def end():\n    try:\n        os._exit(0)\n    finally:\n        done.set()\n"
        "_thread.start_new_thread(end, ())\ndone.wait(30)",
        "end the kernel (os._exit())",
    ),
    (
        "import os, signal\nos.kill(os.getppid(), signal.SIGWINCH)",
        "signal the kernel's parent process (os.kill() of the kernel's parent)",
    ),
    (
        "import os, signal\nos.killpg(os.getpgid(os.getppid()), signal.SIGWINCH)",
        "signal the kernel's parent process (os.killpg() of the parent's process group)",
    ),
    ("import signal\nsignal.alarm(30)", "(signal.alarm() with SIGALRM's default handler)"),
    (
        "import signal\nsignal.setitimer(signal.ITIMER_REAL, 30)",
        "(signal.setitimer() with SIGALRM's default handler)",
    ),
    ("get_ipython().kernel.do_shutdown(False)", "(get_ipython().kernel.do_shutdown())"),
    ("get_ipython().exit_now = True", "(get_ipython().exit_now = True)"),
    ("import faulthandler\nfaulthandler._sigsegv()", "(faulthandler._sigsegv())"),
]


def test_the_routes_around_the_first_guard_are_refused_and_the_kernel_answers(
    kernel: Kernel,
) -> None:
    calls = ", ".join(f"calls(('run_python', {{'code': {code!r}}}))" for code, _ in AROUND)
    script(kernel, "g3", f"[{calls}, reply('still here')]")
    run = kernel.ok("%%agent --tools notebook\nTry to stop the kernel")
    assert run.stdout.endswith("assistant: still here\n")
    found = results(kernel)
    assert [r["error"] for r in found] == [True] * len(AROUND), found
    for (code, rule), result in zip(AROUND, found, strict=True):
        first = result["text"].splitlines()[0]
        assert first.startswith("refused: the agent may not "), (code, first)
        assert rule in first, (code, first)
    assert "refused: the agent may not signal the kernel's parent process" in run.stdout
    # The kernel answers the next cell, and is not set to exit after it.
    assert kernel.ok("print('alive')").stdout == "alive\n"
    assert kernel.ok("print(get_ipython().exit_now)").stdout == "False\n"
    assert kernel.ok("import signal\nprint(signal.alarm(0))").stdout == "0\n"  # no timer armed


def test_harmless_timers_threads_and_probes_still_work(kernel: Kernel) -> None:
    kernel.ok("import signal\nsignal.signal(signal.SIGALRM, lambda signum, frame: None)")
    script(
        kernel,
        "g4",
        "[calls(('run_python', {'code': 'import os\\nos.kill(os.getppid(), 0)\\nparent = 1'})),"
        " calls(('run_python', {'code': 'import signal\\nsignal.alarm(0)\\n"
        "signal.setitimer(signal.ITIMER_REAL, 60, 0.0)\\n"
        "signal.setitimer(signal.ITIMER_REAL, 0)'})),"
        " calls(('run_python', {'code': 'import threading\\nbox = []\\n"
        "t = threading.Thread(target=box.append, args=(1,))\\nt.start()\\nt.join()'})),"
        " reply('ok')]",
    )
    kernel.ok("%%agent --tools notebook\nProbe")
    probed, timed, threaded = results(kernel)
    assert not probed["error"], probed["text"]  # signal 0 only asks whether the parent exists
    assert not timed["error"], timed["text"]  # SIGALRM has a handler: the timer ends nothing
    assert not threaded["error"], threaded["text"]
    assert kernel.ok("print(box)").stdout == "[1]\n"
    # A user cell is not guarded, and neither is a thread it starts.
    kernel.ok("import threading\nt = threading.Thread(target=signal.alarm, args=(0,))\nt.start()")
    kernel.ok("signal.signal(signal.SIGALRM, signal.SIG_DFL)")
