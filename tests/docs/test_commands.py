"""Every command README.md, docs/ and the examples show runs. `python -m ci.<room>` (there, the workflows and CI's
scripts): its room and verb answer --help (a command that names a module, not a verb, or a verb that is gone, fails
here). Every other command of a sh/bash fence: the project's tools run offline, in-process, and must do what the page
shows (print its lines, or refuse with its message); what needs a cluster, the network or the host is left out by a
rule of NOT_RUN, and a command no rule knows fails (issue 53, item 8; docs/testing.md, "Commands in the docs")."""
from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import re
import runpy
import shlex
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple
from unittest import mock

import pytest

from tests.helpers import REPO_ROOT

# the docs' --predict and --search commands run aiconfigurator where it is installed; heavy: the module's seconds in CI's
# cluster plane, so that pytest-xdist starts it first (tests/conftest.py).
pytestmark = pytest.mark.heavy(35)

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
    main of its own exits 0 and prints nothing: only a room's entry point prints its usage).

    The room runs in this process as `python -m` runs it (runpy, __name__ "__main__", the words as its sys.argv):
    about 60 ms of CPU less than an interpreter of its own per command. tests/ci/test_rooms.py starts each room in
    an interpreter of its own."""
    if words[0] not in ROOMS:
        return f"{words[0]} is not a room's entry point ({', '.join(ROOMS)})"
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        with mock.patch.object(sys, "argv", [words[0], *words[1:], "--help"]), contextlib.redirect_stdout(stdout), \
                contextlib.redirect_stderr(stderr):
            runpy.run_module(words[0], run_name="__main__", alter_sys=False)
        status = 0
    except SystemExit as leaving:
        status = leaving.code if isinstance(leaving.code, int) else 0 if leaving.code is None else 1
        if isinstance(leaving.code, str):
            stderr.write(leaving.code)  # what the interpreter prints for sys.exit("message")
    except Exception as error:  # the last line of the traceback the interpreter would print
        status = 1
        stderr.write(f"{type(error).__name__}: {error}")
    if status or not stdout.getvalue().startswith(f"usage: python -m {' '.join(words)}"):
        return f"exit {status}: {(stderr.getvalue() or stdout.getvalue()).strip().splitlines()[-1:]}"
    return ""


class TestCommands:
    def test_should_run_every_ci_command_the_docs_show(self):
        commands = shown_commands()
        assert len(commands) >= 20 and any(words[0] == "ci.generate" for words in commands)
        answers = {words: help_of(words) for words in commands}
        failing = {" ".join(words): (answer, commands[words][:3]) for words, answer in answers.items() if answer}
        assert failing == {}

    def test_should_refuse_a_module_or_a_verb_that_is_gone(self):
        # The check above must be able to fail: the old spelling, a module run by -m, has no __main__ now.
        assert help_of(("ci.cluster.control_plane",)) == ("ci.cluster.control_plane is not a room's entry point "
                                                          "(ci.cluster, ci.generate, ci.release)")
        assert "invalid choice: 'publish'" in help_of(("ci.release", "publish"))
        assert help_of(("ci.release", "push")) == ""


# --- Every fenced shell command of the docs runs offline (issue 53, item 8) ----------------------------------------
# docs/testing.md, "Commands in the docs", says the same rules: the project's tools run in-process through the code
# path the script runs (tools/gptoss/plan.py's main(argv)); `helm install|upgrade|template` of charts/gpt-oss renders
# as tools/plan.py renders it (Helm's engine and its values options; the cluster's options left out); a command shown
# refused carries `# refused: <the message>`; a comment line after a command that starts with `#` and two spaces
# shows a line of its output (`...` leaves a part out). What needs a cluster, the network, a GPU or the host is not
# run, by the rules of NOT_RUN; a command no rule knows fails here.
FENCED_IN = ("README.md", "docs/*.md", "charts/gpt-oss/README.md", "examples/**/*.md")
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^ *```", re.S | re.M)
SHELL = {"sh", "bash", "shell", "console"}
# A YAML fence whose first line is `# NAME.yaml` is a file the page's commands name (`-f airgap.yaml`).
NAMED_FILE = re.compile(r"\A# (?P<name>[\w.-]+\.ya?ml)\n")
REFUSED_MARK = re.compile(r"refused: *(?P<message>.+)$")
# (the words a command starts with, after any NAME=value assignments and the interpreter, `x<...>` standing for any
# word that begins with x, `*x` for any later word that x stands for: why it does not run here)
NOT_RUN = [
    (("kubectl",), "needs a cluster"),
    (("kind",), "needs docker and a cluster"),
    (("helm", "test"), "runs the release's test Jobs in a cluster"),
    (("helm", "pull"), "reads a chart registry (network)"),
    (("helm", "*oci://<chart>"), "installs a chart from a registry (network)"),
    (("crane",), "reads an image registry (network)"),
    (("sudo",), "installs host packages (network, root)"),
    (("pip",), "downloads packages (network)"),
    (("python", "-m", "venv"), "creates a venv (the packages then come from PyPI)"),
    (("python", "tools/mirror-model.py"), "reads the Hub and writes a store or registry (network)"),
    (("python", "-m", "ci.<room>"), "answers --help in TestCommands (test_should_run_every_ci_command_the_docs_show)"),
    (("python", "-m", "pytest"), "a test tier: this suite itself"),
    (("pytest",), "a test tier: this suite itself"),
    (("bash", "ci/<script>"), "CI's own scripts: the linters and every tier"),
    (("sed",), "a text edit feeding kubectl (its file is checked by tests/examples)"),
]
CHART = "charts/gpt-oss"
# helm's options a render cannot use offline: dropped, with the value after them where they take one.
HELM_CLUSTER_FLAGS = {"--create-namespace": 0, "--reuse-values": 0, "--wait": 0, "--atomic": 0, "--timeout": 1,
                      "--show-only": 1, "--kube-version": 1, "--logs": 0}


class Command(NamedTuple):
    where: str  # page:line of the command's first line
    text: str  # as shown, continuation lines joined
    refused: str  # the message its `# refused:` comment shows, else ""
    output: tuple[str, ...]  # the lines of output the page shows after it
    files: dict  # {name: text} of the page's named YAML files


def split_comment(line: str) -> tuple[str, str]:
    """(the command, its comment): the comment starts at a `#` after a blank, outside quotes."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in " \t"):
            return line[:index].rstrip(), line[index + 1:].strip()
    return line.rstrip(), ""


def fenced_commands() -> list[Command]:
    """Every command of the pages' sh/bash fences, in page order."""
    found = []
    for pattern in FENCED_IN:
        for path in sorted(REPO_ROOT.glob(pattern)):
            page = path.read_text()
            where = str(path.relative_to(REPO_ROOT))
            files = {}
            for fence in FENCE.finditer(page):
                body = textwrap.dedent(fence["body"])
                if (named := NAMED_FILE.match(body)) and fence["lang"] in ("yaml", "yml"):
                    files[named["name"]] = body
            for fence in FENCE.finditer(page):
                if fence["lang"] not in SHELL:
                    continue
                first = page[:fence.start("body")].count("\n") + 1
                lines = textwrap.dedent(fence["body"]).splitlines()
                index = 0
                while index < len(lines):
                    start, text = index, lines[index]
                    while text.endswith("\\") and index + 1 < len(lines):
                        index += 1
                        text = text[:-1].rstrip() + " " + lines[index].strip()
                    index += 1
                    command, comment = split_comment(text)
                    if not command:
                        continue
                    output = []
                    while index < len(lines) and lines[index].startswith("#  "):
                        output.append(lines[index][1:])
                        index += 1
                    mark = REFUSED_MARK.match(comment)
                    found.append(Command(f"{where}:{first + start}", command, mark["message"] if mark else "",
                                         tuple(output), files))
    return found


def stages(text: str) -> list[list[str]]:
    """The words of each stage of a pipeline, a redirection (`> file`) left out."""
    words = shlex.split(text)
    result, stage = [], []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word == "|":
            result.append(stage)
            stage = []
        elif word in (">", ">>"):
            skip = True
        else:
            stage.append(word)
    return [*result, stage]


def program(words: list[str]) -> list[str]:
    """The words from the program on: NAME=value assignments left out, any Python interpreter (python3,
    .venv/bin/python) spelled python, a venv's pip spelled pip."""
    words = list(itertools.dropwhile(lambda w: re.match(r"^[A-Z_][A-Z0-9_]*=", w), words))
    if words and re.fullmatch(r"(\S*/)?python3?", words[0]):
        words[0] = "python"
    elif words and re.fullmatch(r"(\S*/)?pip3?", words[0]):
        words[0] = "pip"
    return words


def not_run(words: list[str]) -> str:
    """Why NOT_RUN leaves the stage out, or ""."""
    def fits(word: str, pattern: str) -> bool:
        return word.startswith(pattern.partition("<")[0]) if "<" in pattern else word == pattern

    def matches(index: int, pattern: str) -> bool:
        if pattern.startswith("*"):
            return any(fits(w, pattern[1:]) for w in words[index:])
        return index < len(words) and fits(words[index], pattern)
    return next((reason for prefix, reason in NOT_RUN if all(matches(i, w) for i, w in enumerate(prefix))), "")


def tool_argv(words: list[str], files: dict, tmp_path) -> tuple[str, list[str]] | None:
    """(tool, argv) of a stage that runs here: tools/plan.py or tools/predict.py, or a helm install, upgrade or
    template of the chart as tools/plan.py; None for any other stage."""
    files_at = {}
    for name, body in files.items():
        files_at[name] = tmp_path / name
        files_at[name].write_text(body)
    if words[:2] in (["python", "tools/plan.py"], ["python", "tools/predict.py"]):
        tool, argv = words[1].removeprefix("tools/").removesuffix(".py"), words[2:]
    elif words[:1] == ["helm"] and len(words) > 3 and words[1] in ("install", "upgrade", "template") and CHART in words:
        tool, argv, rest = "plan", [], words[2:]
        while rest:
            word = rest.pop(0)
            if word == CHART:
                continue
            if word.split("=")[0] in HELM_CLUSTER_FLAGS:
                rest = rest[HELM_CLUSTER_FLAGS[word] if "=" not in word else 0:]
                continue
            argv.append(word)
    else:
        return None
    argv = [str(files_at[w]) if w in files_at and i and argv[i - 1] in ("-f", "--values") else w
            for i, w in enumerate(argv)]
    # A file the command writes (plan.py --search --write) goes to the test's folder, never into the checkout.
    if tmp_path is not None:
        argv = [str(tmp_path / Path(w).name) if i and argv[i - 1] == "--write" else w for i, w in enumerate(argv)]
    return tool, argv


def run_tool(tool: str, argv: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of tools/<tool>.py with argv, in-process (its main, the code the script runs)."""
    from tools.gptoss import plan, predict
    main = {"plan": plan.main, "predict": predict.main}[tool]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def shown(line: str, lines: list[str]) -> bool:
    """Whether a line the page shows (`...` leaving a part out) is one of `lines`."""
    pattern = ".*".join(re.escape(part) for part in line.strip().split("..."))
    return any(re.search(pattern, candidate) for candidate in lines)


def problems_of(command: Command, tmp_path) -> list[str]:
    """What is wrong with a command the page shows: it fails, or is not refused as shown, or prints other lines; or
    no rule says why it is not run."""
    found = []
    for words in map(program, stages(command.text)):
        if not words:
            continue
        run = tool_argv(words, command.files, tmp_path)
        if run is None:
            if not not_run(words):
                found.append(f"{' '.join(words[:3])}: neither run here nor left out by a rule of NOT_RUN")
            continue
        tool, argv = run
        if "--predict" in argv and importlib.util.find_spec("aiconfigurator") is None:
            argv.remove("--predict")  # the plan still runs; the prediction needs requirements-predict.txt
        if "--search" in argv and importlib.util.find_spec("aiconfigurator") is None:
            continue  # a search is aiconfigurator's alone: it runs where requirements-predict.txt is (CI's full venv)
        status, out, err = run_tool(tool, argv)
        if command.refused:
            if status == 0 or not shown(command.refused, err.splitlines()):
                found.append(f"shown refused with {command.refused!r}, got exit {status}: {err.strip()[:300]}")
        elif status:
            found.append(f"exit {status}: {err.strip()[:400]}")
        found += [f"prints no line {line.strip()!r}" for line in command.output if not shown(line, out.splitlines())]
    return found


COMMANDS = fenced_commands()


class TestFencedCommands:
    # extras: a --predict or --search runs aiconfigurator only where it is installed (problems_of).
    @pytest.mark.parametrize("command", [pytest.param(c, marks=pytest.mark.extras)
                                         if re.search(r"--(predict|search)\b", c.text) else c for c in COMMANDS],
                             ids=[c.where for c in COMMANDS])
    def test_should_run_or_refuse_as_the_page_shows(self, command, tmp_path, monkeypatch):
        monkeypatch.chdir(REPO_ROOT)
        assert problems_of(command, tmp_path) == []

    def test_should_find_the_commands_of_every_page(self):
        pages = {c.where.rsplit(":", 1)[0] for c in COMMANDS}
        assert {"README.md", "docs/tools.md", "docs/operations.md", "docs/model-sources.md"} <= pages
        runs = [c for c in COMMANDS if any(tool_argv(program(s), {}, None) for s in stages(c.text) if s)]
        assert len(runs) >= 20

    def test_should_fail_a_command_that_fails_or_is_not_refused_as_shown(self, tmp_path, monkeypatch):
        # The check above must be able to fail: a refused render, a render shown refused, a line it does not print,
        # and a command no rule knows.
        monkeypatch.chdir(REPO_ROOT)
        size = "python tools/plan.py -f values/agg.yaml --set modelCache.size=100"
        assert problems_of(Command("x:1", size, "", (), {}), tmp_path)[0].startswith("exit 1: Error: execution error")
        assert problems_of(Command("x:1", size, "modelCache.size=100 is a number", (), {}), tmp_path) == []
        fine = "helm upgrade gpt-oss charts/gpt-oss -f values/agg.yaml --reuse-values --set modelCache.size=100Gi"
        assert problems_of(Command("x:1", fine, "", (), {}), tmp_path) == []
        assert problems_of(Command("x:1", fine, "is a number", (), {}), tmp_path)[0].startswith("shown refused with")
        assert problems_of(Command("x:1", fine, "", ("  Model ... (huggingface)", "  no such line"), {}), tmp_path) == [
            "prints no line 'no such line'"]
        assert problems_of(Command("x:1", "make chart", "", (), {}), tmp_path) == [
            "make chart: neither run here nor left out by a rule of NOT_RUN"]

    def test_should_write_the_named_files_of_a_page(self, tmp_path, monkeypatch):
        monkeypatch.chdir(REPO_ROOT)
        files = {"mine.yaml": "# mine.yaml\nmodelCache:\n  size: 100\n"}
        problems = problems_of(Command("x:1", "helm install x charts/gpt-oss -f values/agg.yaml -f mine.yaml", "",
                                       (), files), tmp_path)
        assert "modelCache.size=100 is a number" in problems[0]


# --- pytest's own options of the project (tests/conftest.py): shown in the form pytest reads -----------------------
# `pytest --shared-dir ../shared`: before it loads tests/conftest.py, which registers the option, pytest takes
# `../shared` for a test path, looks for its configuration (pyproject.toml) from there, finds none, and so never loads
# tests/conftest.py: "unrecognized arguments: --shared-dir". `--shared-dir=../shared` is one word it leaves alone.
VALUE_OPTIONS = ("--shared-dir", "--crd-source")
# The option without its `=` on a page (`--shared-dir`, `--shared-dir ../shared`): every page shows the form that works.
WITHOUT_EQUALS = re.compile(r"(?:--shared-dir|--crd-source)(?!=)")


def pytest_root(args: list[str]) -> tuple:
    """(rootdir, configuration file) pytest settles on for `pytest ARGS` run in the checkout, as pytest does it: its
    parser before any conftest is loaded, then its search for the configuration (pytest is pinned in
    requirements-test.txt)."""
    from _pytest.config import get_config
    from _pytest.config.findpaths import determine_setup
    known, unknown = get_config()._parser.parse_known_and_unknown_args(args)
    root, ini, *_ = determine_setup(inifile=None, override_ini=None, args=known.file_or_dir + unknown,
                                    rootdir_cmd_arg=None, invocation_dir=REPO_ROOT)
    return root, ini


class TestPytestOptions:
    def test_should_find_the_configuration_with_the_equals_form_only(self):
        assert pytest_root(["--shared-dir=../shared", "-m", "not e2e"]) == (REPO_ROOT, REPO_ROOT / "pyproject.toml")
        assert pytest_root(["--shared-dir", "../shared", "-m", "not e2e"])[1] is None  # why the docs show the =

    def test_should_show_each_value_option_with_its_equals_sign(self):
        assert len(WITHOUT_EQUALS.findall("pytest --shared-dir ../shared; `--shared-dir=PATH`, --crd-source none")) == 2
        shown = [(path.relative_to(REPO_ROOT).as_posix(), text[match.start():match.end() + 12])
                 for pattern in SHOWN_IN for path in sorted(REPO_ROOT.glob(pattern))
                 for text in [path.read_text()] for match in WITHOUT_EQUALS.finditer(text)]
        assert shown == []


class TestNotRunRules:
    def test_should_list_every_rule_in_the_testing_doc(self):
        # docs/testing.md, "Commands in the docs": its table is NOT_RUN, row by row.
        text = (REPO_ROOT / "docs" / "testing.md").read_text()
        section = text[text.index("## Commands in the docs"):text.index("## Tiers")]
        rows = re.findall(r"^\| `([^`]+)` \| (.+) \|$", section, re.M)
        assert rows == [(" ".join(prefix), reason) for prefix, reason in NOT_RUN]

    def test_should_match_a_rule_by_its_words_only(self):
        assert not_run(program(["KUBECONFIG=x", "kubectl", "get", "pods"])) == "needs a cluster"
        assert not_run(program([".venv/bin/python", "-m", "ci.cluster", "crds"])).startswith("answers --help")
        assert not_run(["helm", "install", "x", "oci://ghcr.io/o/charts/gpt-oss"]).startswith("installs a chart")
        assert not_run(["helm", "install", "x", "charts/gpt-oss"]) == ""
        assert not_run(program(["python", "tools/plan.py"])) == ""
