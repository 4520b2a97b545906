"""User-supplied values as `helm template` builds them (Helm v4's values.Options.MergeValues), parsed by Helm itself
through helm-python-sdk: the -f files in order, then every --set-json, --set, --set-string and --set-file.

A values file is read by Helm's loader.LoadValues, the function `helm template -f` calls (documents split at `---`
lines and merged; Helm's YAML library: aliases limited, YAML 1.1 scalars such as `y` for true, dates and integer
keys as strings, !!binary decoded, a null key refused): the SDK binds it only through the chart loader, so the
file is the values.yaml of a chart archive made in memory. Helm sets no bound on a file; here one is bounded in
size (MAX_FILE_BYTES) and every parsed value in nesting (MAX_DEPTH), so no input makes the tools grow or recurse
without end: each ends in one ValuesError.

The SDK's --set parsers (helm_strvals_parse*) take an expression alone and parse it into an empty map; Helm parses
each --set *into* the values merged so far (strvals.ParseInto: `--set list[1].host=x` keeps a file's list[0] and
the other keys of list[1], `--set a.b=1` on a string is refused). _parse_into() gets that from Helm's parser too:
the values so far, written in Helm's own syntax with a stand-in for each scalar, go before the expression in one
call, and the stand-ins are swapped back afterwards.
"""
from __future__ import annotations

import copy
import functools
import io
import json
import os
import pickle
import secrets
import sys
import tarfile
from pathlib import Path
from typing import Any, Callable, Iterable

import helm_python

from .inputs import MAX_VALUES_BYTES, InputError, check_file, read_file, size_words

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
VALUES_DIR = REPO_ROOT / "values"

# A values file (or a --set-file file) larger than this is refused: no overlay comes near it (they are a few KiB), and
# Helm stores the values in the release's Secret, which the API server caps at 1 MiB.
MAX_FILE_BYTES = MAX_VALUES_BYTES
# What -f and --set-file read (inputs.py): FIFOs, sockets and devices are refused before an open can wait on them.
VALUES_FILE_ALLOWED = f"a regular file of at most {size_words(MAX_FILE_BYTES)}, or - for standard input"
SET_FILE_ALLOWED = f"a regular file of at most {size_words(MAX_FILE_BYTES)}"
# Values nested deeper than this are refused (a pod spec passed through whole is about 12 levels under its key);
# Helm's YAML library stops at 10000, far past what Python's recursion can hold.
MAX_DEPTH = 100


class ValuesError(Exception):
    """A values file or a --set* argument Helm would refuse before rendering (Helm's message), or one past this
    module's bounds."""


@functools.cache
def overlays() -> list[str]:
    """The overlays: the file names of values/, one per deployment target."""
    return sorted(path.name for path in VALUES_DIR.glob("*.yaml"))


@functools.cache
def overlay_runtime(name: str) -> str:
    """The runtime an overlay selects (`runtime`; absent: the chart's default, dynamo)."""
    return read_values_file(VALUES_DIR / name).get("runtime", "dynamo")


def resolve_values_file(path: str | os.PathLike) -> Path | str:
    """A -f argument as the tools read it: "-" (standard input), the path given, or, for a relative path that does not
    exist, the overlay of that name in values/ (so `-f agg.yaml` is values/agg.yaml)."""
    if str(path).strip() == "-":
        return "-"
    given = Path(path)
    if not given.is_absolute() and not given.exists() and (VALUES_DIR / given).is_file():
        return VALUES_DIR / given
    return given


def deep_merge(base: dict, override: dict) -> dict:
    """Helm's loader.MergeMaps (-f files, documents, --set-json objects): maps merge key by key, anything else
    replaces. Returns a new map; neither argument is changed or shared."""
    return deep_copy(_merged(base, override))


def _merged(base: dict, override: dict) -> dict:
    """deep_merge's maps, new at each level where both have one; the leaves still those of the arguments."""
    merged = dict(base)
    for key, value in override.items():
        merged[key] = _merged(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) \
            else value
    return merged


def deep_copy(values):
    """A deep copy, as a pickle round trip: in C, several times faster than copy.deepcopy on values' and rendered
    objects' trees (the tests merge values and copy renders tens of thousands of times)."""
    return pickle.loads(pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL))


# Parsed values files by (path, mtime, size): the tests read the same overlays thousands of times.
_parsed_files: dict[tuple, dict] = {}


def read_values_file(path: str | os.PathLike) -> dict:
    """One -f file, read as Helm reads it ("-" is standard input; a bare overlay name is found in values/)."""
    resolved = resolve_values_file(path)
    try:
        stat = None if resolved == "-" else resolved.stat()
    except OSError:
        stat = None
    if stat is None:
        return _parse_values_file(path, _read_bounded(path, resolved))
    key = (str(resolved.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _parsed_files:
        _parsed_files[key] = _parse_values_file(path, _read_bounded(path, resolved))
    return deep_copy(_parsed_files[key])


def _read_bounded(given, resolved: Path | str) -> bytes:
    """At most MAX_FILE_BYTES + 1 bytes of standard input, or a regular file of at most MAX_FILE_BYTES (checked with
    os.stat before it is opened: a FIFO, a socket or a device such as /dev/zero is refused, never read)."""
    if resolved == "-":
        stream = getattr(sys.stdin, "buffer", None)
        return stream.read(MAX_FILE_BYTES + 1) if stream else sys.stdin.read(MAX_FILE_BYTES + 1).encode()
    if not os.path.exists(resolved) and not os.path.islink(resolved):
        raise ValuesError(f"open {given}: no such file or directory; the overlays, which -f also takes by name, are in "
                          f"{_shown(VALUES_DIR)}/: {', '.join(overlays())}")
    try:
        return read_file(resolved, f"values file {given}", MAX_FILE_BYTES, VALUES_FILE_ALLOWED)
    except InputError as error:
        raise ValuesError(str(error)) from None


def _shown(path: Path) -> str:
    """A path as short as it reads: relative to the working directory when under it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _parse_values_file(given, data: bytes) -> dict:
    where = f"failed to parse {given}: "
    if len(data) > MAX_FILE_BYTES:
        raise ValuesError(f"{where}larger than {MAX_FILE_BYTES} bytes, the most a values file may hold here")
    return _from_helm(_load_values, data, where)


def _load_values(data: bytes) -> dict:
    """Helm's loader.LoadValues of a file's bytes, reached through the chart loader: they are the values.yaml of a
    chart archive made in memory (its refusal is worded `cannot load values.yaml: <LoadValues' message>`)."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz", compresslevel=1) as tar:
        for name, content in (("values-file/Chart.yaml", b"apiVersion: v2\nname: values-file\nversion: 0.0.0\n"),
                              ("values-file/values.yaml", data)):
            member = tarfile.TarInfo(name)
            member.size = len(content)
            tar.addfile(member, io.BytesIO(content))
    with helm_python.Chart.load_archive(archive.getvalue()) as chart:
        return chart.values


def _from_helm(parse: Callable[[Any], dict], text: str | bytes, where: str) -> dict:
    """What one of Helm's parsers makes of `text`, within MAX_DEPTH; its refusal as a ValuesError after `where`."""
    try:
        parsed = parse(text)
    except helm_python.HelmError as error:
        raise ValuesError(where + str(error).removeprefix("cannot load values.yaml: ")) from None
    except RecursionError:  # the SDK's JSON reply nests deeper than Python's decoder goes
        raise ValuesError(f"{where}values nested deeper than {MAX_DEPTH} levels") from None
    except UnicodeEncodeError as error:  # an argument that was not UTF-8 (Python keeps each such byte as a surrogate)
        byte = ord(error.object[error.start]) - 0xDC00
        raise ValuesError(f"{where}not UTF-8 (byte {byte:#04x} at offset {error.start})") from None
    check_depth(parsed, where)
    return parsed


def check_depth(values: Any, where: str = "") -> None:
    """Refuse values nested deeper than MAX_DEPTH maps and lists (walked without recursion)."""
    level = [values]
    for _ in range(MAX_DEPTH + 1):
        level = [child for node in level if isinstance(node, (dict, list))
                 for child in (node.values() if isinstance(node, dict) else node)]
        if not level:
            return
    raise ValuesError(f"{where}values nested deeper than {MAX_DEPTH} levels")


def load_values(values_files: Iterable[str | os.PathLike] = (), values: dict | None = None) -> dict:
    """The merged values of -f F1 -f F2 ..., then `values` on top (a dict, as --set-json '{...}' gives)."""
    merged: dict[str, Any] = {}
    for values_file in values_files:
        merged = deep_merge(merged, read_values_file(values_file))
    return deep_merge(merged, values or {})


def merge_values(values_files: Iterable[str] = (), set_json: Iterable[str] = (), set_values: Iterable[str] = (),
                 set_string: Iterable[str] = (), set_file: Iterable[str] = ()) -> dict:
    """Helm's values.Options.MergeValues: the files in order, then every --set-json, --set, --set-string, --set-file.

    Helm applies the kinds in that order whatever their order on the command line.
    """
    base = load_values(values_files)
    for value in set_json:
        trimmed = value.strip()
        if trimmed.startswith("{"):
            where = f"failed parsing --set-json data JSON: {value}"
            try:
                parsed = json.loads(trimmed, parse_constant=_not_json)
            except RecursionError:
                raise ValuesError(f"{where}: values nested deeper than {MAX_DEPTH} levels") from None
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict):  # Go's json.Unmarshal into a map takes an object only
                raise ValuesError(where)
            check_depth(parsed, f"{where}: ")
            base = deep_merge(base, parsed)
        else:
            try:
                base = _parse_into(helm_python.parse_set_json, value, base)
            except ValuesError as error:
                # Helm's own wording: its message names the argument, not the parser's reason; ours past a bound.
                raise ValuesError(f"failed parsing --set-json data {value}"
                                  + (f": {error}" if "nested deeper" in str(error) else "")) from None
    for option, parse, expressions in (("--set", helm_python.parse_set_string, set_values),
                                       ("--set-string", helm_python.parse_set_string_values, set_string),
                                       ("--set-file", helm_python.parse_set_file, set_file)):
        for value in expressions:
            if option == "--set-file":
                _check_set_files(value)
            try:
                base = _parse_into(parse, value, base)
            except ValuesError as error:
                raise ValuesError(f"failed parsing {option} data: {error}") from None
    return base


def _check_set_files(expression: str) -> None:
    """Every file a --set-file expression names, checked with os.stat before Helm's reader opens it (Helm reads a
    FIFO or /dev/zero until it waits forever or runs out of memory). The expression's paths are what Helm's
    --set-string parser makes of it; an expression that parser refuses is left to Helm's own refusal."""
    try:
        paths = _from_helm(helm_python.parse_set_string_values, expression, "")
    except ValuesError:
        return
    level: list[tuple[str, Any]] = [(key, value) for key, value in paths.items()]
    while level:
        key, value = level.pop(0)
        if isinstance(value, dict):
            level += [(f"{key}.{child}", item) for child, item in value.items()]
        elif isinstance(value, list):
            level += [(f"{key}[{index}]", item) for index, item in enumerate(value)]
        elif isinstance(value, str) and os.path.lexists(value):  # a missing file: Helm's own message
            try:
                check_file(value, f"--set-file {key}={value}", MAX_FILE_BYTES, SET_FILE_ALLOWED)
            except InputError as error:
                raise ValuesError(str(error)) from None


def _not_json(name: str):
    raise ValueError(f"{name} is not JSON")  # Go's JSON has no NaN or Infinity


# --- strvals.ParseInto with the SDK's parsers ---------------------------------------------------------------

# Stand-ins for the scalars of the values so far: characters of Unicode's private use area that no expression
# escapes and no typed scalar (true, null, 12) looks like, with a per-process random part. strvals writes no
# empty map, empty list or key "": _NO_KEY is the one key of an empty map (dropped after), _NO_ITEM the first
# item of an empty list (dropped, or null where the expression set later items: Helm's padding), _EMPTY_KEY the
# key "".
_STAND_IN = f"\ue000{secrets.token_hex(6)}:"
_NO_KEY, _NO_ITEM, _EMPTY_KEY = f"{_STAND_IN}no-key", f"{_STAND_IN}no-item", f"{_STAND_IN}empty-key"
# strvals' limits: MaxNestedNameLevel (`key.` steps in one path) and MaxIndex.
_MAX_NESTED_NAME_LEVEL, _MAX_INDEX = 30, 65536


def _parse_into(parse: Callable[[str], dict], expression: str, base: dict) -> dict:
    """strvals.ParseInto(expression, base) by Helm's parser `parse` (one of helm_python.parse_set_*); a new map.

    Helm's parser reads `base`, written as `path=<stand-in>` pairs, and the expression after them in one call, so
    the expression meets the values so far as strvals.ParseInto would have them: a list keeps its other items, a
    map its other keys; a map where the expression indexes a list, or a scalar where it names a key, is refused
    (the message calls a number, or under --set-string any scalar, a string). The stand-ins are swapped back after. Unlike Helm, under --set and
    --set-string an empty list from before takes no list in its first item (`a[0][0]=x` on `a: []` is refused).
    --set-file: the pairs are read by the --set-string parser (a stand-in is no file), and each value the expression
    sets is the file Helm's reader read for the same path, reading the expression alone.
    """
    file_values = parse is helm_python.parse_set_file
    alone = _from_helm(parse, expression, "") if file_values else None
    pairs: list[str] = []
    stand_ins: dict[str, Any] = {}
    json_values = parse is helm_python.parse_set_json
    typed = json_values or parse is helm_python.parse_set_string
    for key, value in base.items():
        _write_paths(_escape(key), 0, value, pairs, stand_ins, json_values, typed)
    combined = _from_helm(helm_python.parse_set_string_values if file_values else parse,
                          ",".join([*pairs, expression]), "")
    return _put_back(combined, alone, stand_ins, file_values)


def _escape(key: str) -> str:
    """A map key in strvals syntax: `\\` before each character that ends a key."""
    return _EMPTY_KEY if key == "" else "".join("\\" + char if char in "\\=[],." else char for char in key)


def _write_paths(path: str, level: int, value: Any, pairs: list[str], stand_ins: dict, json_values: bool,
                 typed: bool, indexed: bool = False) -> None:
    """`value`, which base holds at `path` (`level` key. steps deep; `indexed`: the path ends in [i]), as strvals pairs:
    maps and lists item by item as far as an expression can reach; null and booleans as they are where the parser
    types values (`typed`), everything else one stand-in."""
    step = level if indexed else level + 1  # strvals counts `key.` steps, not `[i].`
    if isinstance(value, dict) and step <= _MAX_NESTED_NAME_LEVEL:
        if not value:  # one key, so the map is there, dropped after
            pairs.append(f"{path}.{_NO_KEY}=" + ('""' if json_values else ""))
        for key, item in value.items():
            _write_paths(f"{path}.{_escape(key)}", step, item, pairs, stand_ins, json_values, typed)
        return
    if isinstance(value, list) and len(value) <= _MAX_INDEX + 1:
        if not value:  # `a={}` is [""] under --set: one item, so the list is there
            pairs.append(f"{path}=[]" if json_values else f"{path}[0]={_NO_ITEM}")
        for index, item in enumerate(value):
            _write_paths(f"{path}[{index}]", level, item, pairs, stand_ins, json_values, typed, indexed=True)
        return
    if (value is None or isinstance(value, bool)) and typed:  # as they are: an index into a null item works
        pairs.append(f"{path}={json.dumps(value)}")
        return
    stand_in = f"{_STAND_IN}{len(stand_ins)}"
    stand_ins[stand_in] = value
    pairs.append(f"{path}=" + (json.dumps(stand_in) if json_values else stand_in))


def _put_back(parsed: Any, alone: Any, stand_ins: dict, file_values: bool) -> Any:
    """`parsed` with the stand-ins swapped back (their values copied); with file_values, each value the expression
    set is the one at the same path of `alone` (the file Helm's reader read)."""
    if isinstance(parsed, str) and parsed in stand_ins:
        return copy.deepcopy(stand_ins[parsed])
    if isinstance(parsed, dict):
        return {"" if key == _EMPTY_KEY else key:
                _put_back(item, alone.get(key) if isinstance(alone, dict) else None, stand_ins, file_values)
                for key, item in parsed.items() if key != _NO_KEY}
    if isinstance(parsed, list):
        if parsed and parsed[0] == _NO_ITEM:
            parsed = [None, *parsed[1:]] if len(parsed) > 1 else []
        return [_put_back(item, alone[index] if isinstance(alone, list) and index < len(alone) else None, stand_ins,
                          file_values) for index, item in enumerate(parsed)]
    return alone if file_values else parsed
