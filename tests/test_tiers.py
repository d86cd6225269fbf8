"""The tier rules of tests/conftest.py: every test gets one tier, and a unit test that starts a
process fails, named, with the marker it needs."""

from __future__ import annotations

from pathlib import Path

import pytest

CONFTEST = (Path(__file__).parent / "conftest.py").read_text(encoding="utf-8")


def test_every_test_of_this_run_has_exactly_one_tier(request: pytest.FixtureRequest) -> None:
    tiers = ("unit", "kernel", "browser", "oracle", "bench", "live")
    for item in request.session.items:
        own = [tier for tier in tiers if item.get_closest_marker(tier) is not None]
        assert len(own) == 1, (item.nodeid, own)


def _write_suite(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST.replace('pytest_plugins = ["pytester"]', ""))
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        test_some="""
        import subprocess, sys
        import pytest

        @pytest.fixture
        def kernel():
            return "a stand-in with the kernel fixture's name"

        def test_pure():
            assert 1 + 1 == 2

        def test_starts_python():
            subprocess.run([sys.executable, "-c", "pass"], check=True)

        def test_starts_python_and_hides_the_error():
            try:
                subprocess.run([sys.executable, "-c", "pass"], check=True)
            except Exception:
                pass

        @pytest.mark.kernel
        def test_marked_kernel_may_start_python():
            subprocess.run([sys.executable, "-c", "pass"], check=True)

        def test_uses_the_kernel_fixture(kernel):
            subprocess.run([sys.executable, "-c", "pass"], check=True)
        """
    )


@pytest.mark.kernel  # its inner tests start python: the outer test is not a unit test
def test_a_unit_test_that_starts_a_process_fails_naming_the_marker(
    pytester: pytest.Pytester,
) -> None:
    _write_suite(pytester)
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", "-rf")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(
        [
            "E * test_some.py::test_starts_python is marked unit but starts a process "
            "(subprocess.Popen: *); mark it kernel*",
            "FAILED test_some.py::test_starts_python - *",
            "FAILED test_some.py::test_starts_python_and_hides_the_error - Failed: marked *",
        ],
        consecutive=False,
    )


def test_tiers_select_by_folder_fixture_and_marker(pytester: pytest.Pytester) -> None:
    _write_suite(pytester)
    unit = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", "-m", "unit", "--co")
    unit.stdout.fnmatch_lines(["*3/5 tests collected (2 deselected)*"])
    kernel = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", "-m", "kernel", "--co")
    kernel.stdout.fnmatch_lines(["*2/5 tests collected (3 deselected)*"])
