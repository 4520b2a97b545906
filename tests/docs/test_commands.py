"""Every `python -m ci.<room>` command README.md, docs/, the examples, the workflows and CI's scripts show runs: its
room and verb answer --help (a command that names a module, not a verb, or a verb that is gone, fails here)."""
from __future__ import annotations

import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from tests.helpers import REPO_ROOT

# The command, its room or module, and the word after it: a verb, an option or nothing.
# A placeholder (`python -m ci.<room>`) is not a command.
COMMAND = re.compile(r"python3? -m (ci(?:\.\w+)*)(?!\.<)((?: +[a-z][\w-]*)?)")
ROOMS = ("ci.cluster", "ci.generate", "ci.release")
SHOWN_IN = ("README.md", "docs/*.md", "charts/gpt-oss/README.md", "examples/**/*.md", ".github/**/*.yaml",
            "ci/**/*.sh", ".ci/run", "CONTRIBUTING.md")


def shown_commands() -> dict[tuple[str, ...], list[str]]:
    """{(module, verb?): [where it is shown, ...]}, every `python -m ci...` of the files above."""
    found: dict[tuple[str, ...], list[str]] = {}
    for pattern in SHOWN_IN:
        for path in sorted(REPO_ROOT.glob(pattern)):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                for match in COMMAND.finditer(line):
                    words = (match.group(1), *match.group(2).split())
                    found.setdefault(words, []).append(f"{path.relative_to(REPO_ROOT)}:{number}")
    return found


def help_of(words: tuple[str, ...]) -> str:
    """What is wrong with the command, or "" when it answers --help with its usage (a module run by -m without a
    main of its own exits 0 and prints nothing: only a room's entry point prints its usage)."""
    if words[0] not in ROOMS:
        return f"{words[0]} is not a room's entry point ({', '.join(ROOMS)})"
    result = subprocess.run([sys.executable, "-m", *words, "--help"], capture_output=True, text=True, cwd=REPO_ROOT,
                            timeout=120)
    if result.returncode or not result.stdout.startswith(f"usage: python -m {' '.join(words)}"):
        return f"exit {result.returncode}: {(result.stderr or result.stdout).strip().splitlines()[-1:]}"
    return ""


class TestCommands:
    def test_should_run_every_ci_command_the_docs_show(self):
        commands = shown_commands()
        assert len(commands) >= 20 and any(words[0] == "ci.generate" for words in commands)
        with ThreadPoolExecutor(4) as pool:
            answers = dict(zip(commands, pool.map(help_of, commands)))
        failing = {" ".join(words): (answer, commands[words][:3]) for words, answer in answers.items() if answer}
        assert failing == {}

    def test_should_refuse_a_module_or_a_verb_that_is_gone(self):
        # The check above must be able to fail: the old spelling, a module run by -m, has no __main__ now.
        assert help_of(("ci.cluster.control_plane",)) == ("ci.cluster.control_plane is not a room's entry point "
                                                          "(ci.cluster, ci.generate, ci.release)")
        assert "invalid choice: 'publish'" in help_of(("ci.release", "publish"))
        assert help_of(("ci.release", "push")) == ""
