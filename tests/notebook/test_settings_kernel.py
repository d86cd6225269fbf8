"""``%agent status`` lists the environment settings that differ from their defaults, read when
asked (``%env`` in the kernel shows at once), and never prints a secret pasted into one."""

from __future__ import annotations

from .conftest import Kernel

HEADER = "settings (the README's Settings table lists all):\n"


def _settings_part(status: str) -> str:
    return status[status.index("settings") :]


def test_status_lists_the_settings_set_in_the_kernel(kernel: Kernel) -> None:
    # The test kernel runs in plain mode: the one setting away from its default (with the
    # notebook context as it is by default, for this test).
    kernel.ok("%env PI_NOTEBOOK_CONTEXT=")
    status = kernel.ok("%agent status").stdout
    assert _settings_part(status) == HEADER + "  PI_NOTEBOOK_UI=plain (default: panel)\n"
    kernel.ok("%env PI_NOTEBOOK_APPROVAL_TIMEOUT=soon\n%env PI_NOTEBOOK_CODE_CELL=off")
    assert _settings_part(kernel.ok("%agent status").stdout) == (
        HEADER + "  PI_NOTEBOOK_UI=plain (default: panel)\n"
        "  PI_NOTEBOOK_CODE_CELL=off (default: on)\n"
        "  PI_NOTEBOOK_APPROVAL_TIMEOUT=soon: not understood, the default (600) applies\n"
    )
    kernel.ok(
        "%env PI_NOTEBOOK_APPROVAL_TIMEOUT=\n%env PI_NOTEBOOK_CODE_CELL=\n%env PI_NOTEBOOK_UI="
    )
    status = kernel.ok("%agent status").stdout
    assert status.endswith("settings: the defaults (the README's Settings table lists all)\n")
    kernel.ok("%env PI_NOTEBOOK_UI=plain\n%env PI_NOTEBOOK_CONTEXT=off")


def test_a_secret_pasted_into_a_setting_is_redacted(kernel: Kernel) -> None:
    secret = "sk-ant-api03-" + "Zq7" * 12
    kernel.ok(f"%env PI_NOTEBOOK_SESSIONS={secret}")
    status = kernel.ok("%agent status").stdout
    assert secret not in status and secret[:12] not in status
    assert "  PI_NOTEBOOK_SESSIONS=[redacted: api key]: not understood" in status
    kernel.ok("%env PI_NOTEBOOK_SESSIONS=")
