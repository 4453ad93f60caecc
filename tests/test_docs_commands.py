"""Every `vectrixdb ...` command the README, the documentation pages and the notebooks show in prose names a real command and
only options that command takes (notebook 10 once said `vectrixdb serve --folder F`, where the folder
is an argument). Commands inside code blocks the tests run are checked by running them; these are
the ones a reader copies from a sentence."""
from __future__ import annotations

import re
import shlex

import pytest
import typer

from tests.conftest import ROOT

SHOWN = re.compile(r"`(vectrixdb [^`]+)`")


def places():
    from tests.test_docs_site import pages

    for path in [*pages(), *sorted((ROOT / "notebooks").glob("*.py"))]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for command in SHOWN.findall(line):
                yield f"{path.name}:{number}", command


def command_of(words: list[str]):
    """The (sub)command the words name, and the words after it."""
    from vectrixdb.cli import app

    command = typer.main.get_command(app)
    rest = words[1:]
    while hasattr(command, "commands") and rest and not rest[0].startswith("-"):  # a group (typer's or click's)
        found = command.commands.get(rest[0])
        if found is None:
            raise AssertionError(f"no command {rest[0]!r} under {command.name!r} (it has {sorted(command.commands)})")
        command, rest = found, rest[1:]
    return command, rest


def test_there_are_commands_to_check():
    assert len(list(places())) >= 10


@pytest.mark.parametrize("where, shown", list(places()), ids=lambda v: str(v)[:60])
def test_a_command_shown_in_prose_exists_with_its_options(where, shown):
    check_command(where, shown)


def check_command(where: str, shown: str) -> None:
    """The command `shown` names exists and takes every option it names (also for the pages' bash blocks)."""
    words = shlex.split(shown.replace("...", "").replace("…", ""))
    command, rest = command_of(words)
    takes = {"--help", *(name for p in command.params for name in [*getattr(p, "opts", []), *getattr(p, "secondary_opts", [])])}
    named = {w.split("=", 1)[0] for w in rest if w.startswith("--")}
    assert named <= takes, f"{where}: `{shown}` names {sorted(named - takes)}, which `{command.name}` does not take"
