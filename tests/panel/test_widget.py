"""AgentPanel: thread-safe control handlers, approvals, the synced state, the front end asset."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import zipfile
from dataclasses import dataclass
from typing import Any

import pytest

from pi_notebook.agent import Agent
from pi_notebook.ai import AbortController, faux_assistant_message
from pi_notebook.notebook.panel import AgentPanel
from pi_notebook.notebook.panel.assets import BUILD, built, bundle, frontend, js_directory
from pi_notebook.notebook.panel.widget import WIDGET_MIME

from .helpers import CapturePanel, faux, replay


async def test_handlers_from_another_thread_run_on_the_agents_loop() -> None:
    # long enough (about 4 s at 500 tokens/s) to still be streaming when the abort arrives
    provider = faux([faux_assistant_message("slow " * 400), faux_assistant_message("ok")], tps=500)
    agent = Agent(model=provider.get_model())
    loop_thread = threading.get_ident()
    calls: list[tuple[str, int]] = []
    steer, abort = agent.steer, agent.abort

    def record_steer(message: Any) -> None:
        calls.append(("steer", threading.get_ident()))
        steer(message)

    def record_abort() -> None:
        calls.append(("abort", threading.get_ident()))
        abort()

    agent.steer = record_steer  # type: ignore[method-assign]
    agent.abort = record_abort  # type: ignore[method-assign]
    panel = CapturePanel()
    panel.attach(agent)
    panel.handle_message({"type": "hello"})
    task = asyncio.ensure_future(agent.prompt("Hi"))
    await panel.wait_for(lambda p: "slow" in json.dumps(p.sent))

    def from_comm_thread() -> None:
        panel._on_custom_msg(panel, {"type": "steer", "text": "from a thread"}, [])
        panel._on_custom_msg(panel, {"type": "followup", "text": "later"}, [])

    worker = threading.Thread(target=from_comm_thread)
    worker.start()
    worker.join()
    await panel.wait_for(lambda p: len(p.snapshot["queue"]) == 2)
    assert panel.snapshot["queue"] == [
        {"kind": "steer", "text": "from a thread"},
        {"kind": "followup", "text": "later"},
    ]
    assert calls == [("steer", loop_thread)]
    panel.handle_message({"type": "clear_queue"})
    assert panel.snapshot["queue"] == [] and not agent.has_queued_messages()
    worker = threading.Thread(target=panel._on_custom_msg, args=(panel, {"type": "abort"}, []))
    worker.start()
    worker.join()
    await asyncio.wait_for(task, 5)
    panel.finish()
    assert calls == [("steer", loop_thread), ("abort", loop_thread)]
    assert [m.role for m in agent.state.messages] == ["user", "assistant"]
    assert agent.state.messages[-1].stop_reason == "aborted"


async def test_steer_and_followup_sent_as_the_run_ends_wait_for_the_next_prompt() -> None:
    provider = faux([faux_assistant_message("x"), faux_assistant_message("y")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel()
    panel.attach(agent)
    await agent.prompt("Hi")
    panel.finish()
    panel.handle_message({"type": "steer", "text": "too late"})
    panel.handle_message({"type": "followup", "text": "and later"})
    assert panel.snapshot["status"]["note"] == "queued for the next %%agent cell"
    assert [(q["kind"], q["text"]) for q in panel.snapshot["queue"]] == [
        ("steer", "too late"),
        ("followup", "and later"),
    ]
    panel.handle_message({"type": "abort"})
    assert panel.snapshot["status"]["note"] == "no run is active"
    # The next prompt delivers them: the steer with it, the follow-up after its answer.
    await agent.prompt("Next")
    users = [m.content[0].text for m in agent.state.messages if m.role == "user"]
    assert users == ["Hi", "Next", "too late", "and later"]


@dataclass(frozen=True)
class Request:
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    summary: str


async def test_request_approval_waits_for_the_view() -> None:
    panel = CapturePanel()
    panel.attach(Agent())
    panel.handle_message({"type": "hello"})
    ask = asyncio.ensure_future(
        panel.request_approval(Request("c1", "run_python", {"code": "1"}, "1 line"))
    )
    await panel.wait_for(lambda p: bool(p.snapshot["approvals"]))
    assert panel.snapshot["approvals"][0]["summary"] == "1 line"
    panel.handle_message({"type": "approval", "tool_call_id": "c1", "approved": True})
    assert await ask is True
    assert panel.snapshot["approvals"] == []
    deny = asyncio.ensure_future(panel.request_approval(Request("c2", "x", {}, "s")))
    await panel.wait_for(lambda p: bool(p.snapshot["approvals"]))
    panel.handle_message({"type": "approval", "tool_call_id": "c2", "approved": "yes"})
    assert await deny is False, "only a JSON true approves"
    controller = AbortController()
    aborted = asyncio.ensure_future(
        panel.request_approval(Request("c3", "x", {}, "s"), controller.signal)
    )
    await panel.wait_for(lambda p: bool(p.snapshot["approvals"]))
    controller.abort()
    assert await aborted is False
    assert replay(panel.sent) == panel.snapshot


async def test_finish_syncs_the_full_state_and_the_static_bundle() -> None:
    provider = faux([faux_assistant_message("Final *answer*")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel()
    assert repr(panel) == "<pi_notebook agent panel>"
    panel.attach(agent)
    await agent.prompt("Q")
    panel.finish()
    synced = dict(panel.state)
    assert synced.pop("finished") is True and synced.pop("seq") == panel.transport.seq
    assert synced == panel.snapshot
    assert panel.sent == [], "no view said hello: nothing was streamed"
    # A view re-created after the run (the display update) already has the final state.
    panel.handle_message({"type": "hello", "seq": panel.state["seq"]})
    assert panel.sent == []
    panel.handle_message({"type": "hello", "seq": -1})
    assert [m["type"] for m in panel.sent] == ["snapshot"]
    data = panel.static_bundle()
    assert data["text/plain"] == "user: Q\nassistant: Final *answer*"
    assert "<em>answer</em>" in data["text/html"]
    assert set(data) == {"text/html", "text/plain"}, "no widget view: it reads everywhere"


async def test_a_finished_panel_displays_as_its_transcript_and_closes() -> None:
    provider = faux([faux_assistant_message("Static *now*")])
    agent = Agent(model=provider.get_model())
    panel = CapturePanel()
    live = panel._repr_mimebundle_()
    assert WIDGET_MIME in (live[0] if isinstance(live, tuple) else live)
    panel.attach(agent)
    await agent.prompt("Q")
    panel.finish(sync=False)
    synced_before = dict(panel.state)
    assert synced_before["finished"] is False, "no final sync when the panel is about to close"
    assert panel._repr_mimebundle_() == panel.static_bundle()
    assert "<em>now</em>" in panel.static_bundle()["text/html"]
    assert panel.comm is not None
    panel.close()
    assert panel.comm is None
    assert panel._repr_mimebundle_() == panel.static_bundle()
    assert panel.snapshot["status"]["state"] == "done"


def test_the_front_end_bundle_is_one_module_without_relative_imports() -> None:
    esm, css = frontend()
    assert AgentPanel._esm == esm and ".pi-panel" in css
    assert not re.search(r"^\s*import\s", esm, re.MULTILINE)
    assert not re.search(r"""from\s*["']\.""", esm), "no relative import left"
    assert js_directory().name in ("js", "_js")
    joined = bundle(js_directory())
    assert not re.search(r"^\s*import\s", joined, re.MULTILINE)
    assert joined.count("export default") == 1


def test_the_minified_build_is_used_unless_a_source_is_newer(tmp_path: Any) -> None:
    sources, build = tmp_path / "js", tmp_path / "_build"
    sources.mkdir()
    build.mkdir()
    (sources / "panel.js").write_text("export default {};\n")
    assert built(sources, build) is None, "no build: the sources are joined"
    (build / "panel.js").write_text("export{a as default};")
    (build / "panel.css").write_text(".pi-panel{}")
    os.utime(sources / "panel.js", (1_000, 1_000))
    assert built(sources, build) == ("export{a as default};", ".pi-panel{}")
    (sources / "panel.css").write_text(".pi-panel { }")  # edited after the build
    assert built(sources, build) is None
    # In the wheel the sources and the build come from one build: no mtime check.
    wheel = tmp_path / "_js"
    wheel.mkdir()
    (wheel / "view.js").write_text("x")
    assert built(wheel, build) is not None


needs_build = pytest.mark.skipif(
    not (BUILD / "panel.js").is_file() and os.environ.get("CI", "") != "true",
    reason="the front end is not built (cd js && npm ci && npm run build)",
)


@needs_build
def test_each_panel_sends_the_minified_module(tmp_path: Any) -> None:
    esm, css = frontend()
    assert esm == (BUILD / "panel.js").read_text(), "the build is there and fresh"
    joined = bundle(js_directory())
    sources_css = (js_directory() / "panel.css").read_text()
    assert len(esm) < 0.7 * len(joined) and len(css) < 0.9 * len(sources_css)


@pytest.mark.kernel
@needs_build
@pytest.mark.timeout(300)
def test_the_wheel_ships_the_minified_front_end(tmp_path: Any) -> None:
    root = js_directory().parent
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(root)],
        check=True,
        capture_output=True,
        timeout=240,
    )
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        shipped = archive.read("pi_notebook/notebook/panel/_build/panel.js").decode()
    assert shipped == (BUILD / "panel.js").read_text()
    assert "pi_notebook/notebook/panel/_build/panel.css" in names
    assert "pi_notebook/notebook/panel/_js/view.js" in names, "and the sources, as the fallback"


def test_bundle_inlines_dependencies_first(tmp_path: Any) -> None:
    (tmp_path / "a.js").write_text('export function a() { return "a"; }\n')
    (tmp_path / "b.js").write_text(
        'import { a } from "./a.js";\nexport const b = () => a() + "b";\n'
    )
    (tmp_path / "panel.js").write_text(
        'import { b } from "./b.js";\nimport { a } from "./a.js";\n'
        "export default { v: b() + a() };\n"
    )
    out = bundle(tmp_path)
    assert out.index("function a()") < out.index("const b =") < out.index("export default")
    assert out.count("function a()") == 1 and "export function" not in out


@pytest.mark.kernel
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_imports_the_bundle(tmp_path: Any) -> None:
    path = tmp_path / "bundle.mjs"
    path.write_text(frontend()[0])
    code = f"const m = await import({json.dumps(path.as_uri())});"
    code += " console.log(typeof m.default.render)"
    done = subprocess.run(
        ["node", "--input-type=module", "-e", code],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert done.stdout.strip() == "function"
