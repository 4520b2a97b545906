"""Helm's command-line options for the values and the release, shared by tools/plan.py and tools/predict.py.

`[RELEASE] [-f FILE]... [--set k=v]... [--set-string k=v]... [--set-json JSON]... [--set-file k=path]... [-n NS]`,
merged as `helm template` merges them (values.merge_values). A bad option or value raises UsageError or ValuesError with
a one-line message; main() of each tool prints it as `Error: <message>` and exits 2, as Helm does.
"""
from __future__ import annotations

import argparse
import csv
import os
import re
import sys
from pathlib import Path

from .render import NAMESPACE, RELEASE_NAME
from .values import merge_values

# chartutil.ValidateReleaseName (Helm v4): a DNS-1123 subdomain of at most 53 characters.
RELEASE_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
# A namespace is a DNS-1123 label (Kubernetes' validation of Namespace names).
NAMESPACE_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
# C0 and C1 control characters and DEL: a value that reaches a terminal with ESC [30;40m or a carriage return can hide
# or rewrite what a tool prints (the chart's own WARNING lines). The schema refuses them in every value; what the tools
# print goes through escape_controls all the same.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class UsageError(Exception):
    """A command line the tool cannot run: unknown or incomplete options, a bad release name."""


class HelmLikeParser(argparse.ArgumentParser):
    """argparse without abbreviations (`--set` is never taken for `--set-json`) and with one-line errors."""

    def __init__(self, **kwargs):
        super().__init__(allow_abbrev=False, **kwargs)

    def error(self, message: str):
        raise UsageError(message)


def add_values_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("positionals", nargs="*", metavar="RELEASE",
                        help=f"release name (default {RELEASE_NAME}); a path to a .yaml file here is a values file "
                             "(the older form), applied before the -f files")
    parser.add_argument("-f", "--values", action="append", default=[], metavar="FILE",
                        help="values file, repeatable, also comma-separated (later files win)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="set_values",
                        help="Helm's --set: a.b=c, a[0].b=c, a={x,y}, several pairs comma-separated; true, false, "
                             "null and integers are typed")
    parser.add_argument("--set-string", action="append", default=[], metavar="KEY=VALUE",
                        help="like --set, every value a string")
    parser.add_argument("--set-json", action="append", default=[], metavar="JSON",
                        help="a JSON object ('{\"a\": {\"b\": 1}}') or key=jsonvalue pairs; null removes a key")
    parser.add_argument("--set-file", action="append", default=[], metavar="KEY=PATH",
                        help="like --set, each value the content of the file named")
    parser.add_argument("-n", "--namespace", default=NAMESPACE,
                        help=f"namespace the release goes to (default {NAMESPACE})")


def _looks_like_values_file(argument: str) -> bool:
    return argument.endswith((".yaml", ".yml")) or "/" in argument or Path(argument).is_file()


def release_and_values(args: argparse.Namespace) -> tuple[str, str, dict]:
    """(release name, namespace, merged values) of parsed options; raises UsageError or ValuesError."""
    names = [a for a in args.positionals if not _looks_like_values_file(a)]
    files = [a for a in args.positionals if _looks_like_values_file(a)]
    if len(names) > 1:
        raise UsageError(f"expected at most one release name, got {', '.join(names)} (values files go after -f)")
    name = names[0] if names else RELEASE_NAME
    if len(name) > 53 or not re.match(RELEASE_NAME_PATTERN, name):
        raise UsageError(f"invalid release name {name!r}, must match regex {RELEASE_NAME_PATTERN} and the length "
                         "must not be longer than 53")
    if len(args.namespace) > 63 or not re.match(NAMESPACE_PATTERN, args.namespace):
        raise UsageError(f"invalid namespace {args.namespace!r}: lowercase letters, digits and '-', starting and "
                         "ending with a letter or digit, at most 63 characters")
    for value in args.values:  # pflag's StringSlice: each -f is a CSV line
        files += [path for row in csv.reader([value]) for path in row]
    values = merge_values(files, args.set_json, args.set_values, args.set_string, args.set_file)
    return name, args.namespace, values


def write(text: str) -> None:
    """Print to standard output. A reader that closed the pipe (`| head -1`) took what it wanted: the rest, and
    Python's own flush at exit (which would raise again), go to /dev/null, and the tool still ends with the exit
    status it decides (a refusal after the plan is still one)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def escape_controls(text: str, keep: str = "") -> str:
    """`text` with every control character but those in `keep` written as its Python escape (\\x1b, \\r, \\x9b)."""
    return CONTROL_CHARACTERS.sub(lambda match: match[0] if match[0] in keep else repr(match[0])[1:-1], text)


def refuse(message: str, status: int) -> int:
    """Print `Error: <message>` on standard error, as Helm does (control characters escaped, the message's own line
    breaks kept), and return the exit status."""
    print(f"Error: {escape_controls(message, keep=chr(10))}", file=sys.stderr)
    return status


def one_line(error: Exception) -> str:
    """The message of a refused input on one line."""
    return str(error).replace("\n", "\\n")


# Helm's schema error for a value of the wrong type: `- at '/workers/nodeSelector/x': got boolean, want string`.
WRONG_TYPE = re.compile(r"at '(?P<pointer>/[^']*)': got (?P<got>\w+), want (?P<want>[\w ]+)")


def _set_key(pointer: str) -> str:
    """A JSON pointer (/a/b.c/0) as the key --set names (a.b\\.c[0])."""
    key = ""
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if part.isdigit():
            key += f"[{part}]"
        else:
            key += ("." if key else "") + re.sub(r"([.,=\[\]\\])", r"\\\1", part)
    return key


def with_set_form_hint(message: str) -> str:
    """Helm's schema error, and a hint line for each value of a type --set gives that the key does not take (a number or
    boolean for a string, a string for a number): the option that gives the type the key wants."""
    hints = {}
    for match in WRONG_TYPE.finditer(message):
        key, got = _set_key(match["pointer"]), match["got"]
        want = [kind for kind in match["want"].split(" or ") if kind != "null"]
        if got in ("number", "integer", "boolean") and "string" in want:
            hints[key] = (f"{key}: --set types true, false, null and integers; --set-string {key}=<value> gives the "
                          "string it wants (or quote it in a values file)")
        elif got == "string" and {"number", "integer", "boolean"} & set(want):
            hints[key] = (f"{key}: --set-string, a quoted YAML value and --set of a decimal (3.00) give strings; "
                          f"--set-json {key}=<value> gives the {' or '.join(want)} it wants")
    return message.rstrip() + "".join(f"\nhint: {hint}" for hint in hints.values()) if hints else message
