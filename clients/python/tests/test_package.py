"""The package as installed: its version, its type marker, its extras and command, and where it is imported from."""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path

import pytest

import callmeter

SOURCE = Path(__file__).resolve().parents[1] / "src"


def test_the_version_is_the_distributions():
    assert callmeter.__version__ == importlib.metadata.version("callmeter")


def test_the_package_is_typed():
    assert (Path(callmeter.__file__).parent / "py.typed").is_file()


def test_the_distribution_declares_the_framework_extras_and_the_command():
    distribution = importlib.metadata.distribution("callmeter")
    assert {"livekit", "pipecat"} <= set(distribution.metadata.get_all("Provides-Extra") or [])
    requires = distribution.requires or []
    assert any(r.startswith("livekit-agents") and 'extra == "livekit"' in r for r in requires)
    assert any(r.startswith("pipecat-ai") and 'extra == "pipecat"' in r for r in requires)
    scripts = [e for e in distribution.entry_points if e.group == "console_scripts"]
    assert [(e.name, e.value) for e in scripts] == [("callmeter", "callmeter.cli:main")]


@pytest.mark.skipif(
    os.environ.get("CALLMETER_TEST_PACKAGE") != "installed",
    reason="run against the source tree (test/clients/python-client.test.ts runs it against the installed wheel)",
)
def test_callmeter_is_imported_from_the_installed_wheel():
    module = Path(callmeter.__file__).resolve()
    assert not module.is_relative_to(SOURCE)
    distribution = importlib.metadata.distribution("callmeter")
    assert module == Path(distribution.locate_file("callmeter/__init__.py")).resolve()
    # The wheel's RECORD lists the modules and the type marker it installed.
    installed = {str(file) for file in distribution.files or []}
    assert {"callmeter/livekit.py", "callmeter/pipecat.py", "callmeter/py.typed"} <= installed
