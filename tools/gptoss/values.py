"""User-supplied values as Helm builds them: -f files merged in order, then --set-json, --set and --set-string.

The --set parsers are a port of Helm v4's pkg/strvals/parser.go (ParseInto, ParseIntoString, ParseJSON), with
its syntax and its error messages: `a.b=c`, `a[0].b=c`, lists `a={x,y}`, several pairs `a=1,b=2`, `\\` to escape
`,` `.` `=` `[`, typed scalars under --set (true/false/null, integers not starting with 0; the rest stays a
string, floats too) and strings only under --set-string. Each parses *into* the values built so far, as Helm's
do, so `--set list[1]=x` keeps a file's list[0]. tests/test_tools.py compares them with Helm's own parser
(helm-python-sdk's strvals bindings).
"""
from __future__ import annotations

import copy
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

import yaml

from tools.gptoss.yaml_text import load_yaml

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
VALUES_DIR = REPO_ROOT / "values"
# The overlays (the targets of values/), and by the runtime each selects (absent = the chart default, dynamo).
OVERLAYS = sorted(path.name for path in VALUES_DIR.glob("*.yaml"))
RUNTIMES = {name: (load_yaml((VALUES_DIR / name).read_text()) or {}).get("runtime", "dynamo") for name in OVERLAYS}
DYNAMO_OVERLAYS = [name for name in OVERLAYS if RUNTIMES[name] == "dynamo"]
TRTLLM_SERVE_OVERLAYS = [name for name in OVERLAYS if RUNTIMES[name] == "trtllm-serve"]

# Helm's limits (strvals.MaxIndex, strvals.MaxNestedNameLevel).
MAX_INDEX = 65536
MAX_NESTED_NAME_LEVEL = 30


class ValuesError(Exception):
    """A values file or a --set* argument Helm would refuse before rendering; the message is Helm's."""


def deep_merge(base: dict, override: dict) -> dict:
    """Merge like Helm's -f files (loader.MergeMaps): maps merge key by key, anything else replaces."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


# Parsed values files by (path, mtime, size): the tests read the same overlays thousands of times.
_parsed_files: dict[tuple, dict] = {}


def read_values_file(path: str | os.PathLike) -> dict:
    """One -f file, read as Helm reads it ("-" is standard input): a missing file or one that is not a YAML map is
    refused."""
    if str(path).strip() != "-":
        try:
            stat = Path(path).stat()
        except OSError:
            stat = None
        if stat is not None:
            key = (str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size)
            if key not in _parsed_files:
                _parsed_files[key] = _parse_values_file(path)
            return copy.deepcopy(_parsed_files[key])
    return _parse_values_file(path)


def _parse_values_file(path: str | os.PathLike) -> dict:
    try:
        text = sys.stdin.read() if str(path).strip() == "-" else Path(path).read_text()
    except FileNotFoundError:
        raise ValuesError(f"open {path}: no such file or directory") from None
    except IsADirectoryError:
        raise ValuesError(f"read {path}: is a directory") from None
    except OSError as error:
        raise ValuesError(f"open {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise ValuesError(f"failed to parse {path}: not UTF-8 (byte {error.object[error.start]:#04x} at offset "
                          f"{error.start})") from None
    try:
        loaded = yaml.safe_load(text)  # pure-Python PyYAML: its messages are the ones users see
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        raise ValuesError(f"failed to parse {path}: {where}{getattr(error, 'problem', None) or error}") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ValuesError(f"failed to parse {path}: a values file is a YAML map, not a {type(loaded).__name__}")
    return loaded


def load_values(values_files: Iterable[str | os.PathLike] = (), values: dict | None = None) -> dict:
    """The merged values of -f F1 -f F2 ..., then `values` on top (a dict, as --set-json '{...}' gives).

    A relative path that does not exist is looked up in values/, so an overlay can be named alone
    ("agg.yaml"), as the tests do.
    """
    merged: dict[str, Any] = {}
    for values_file in values_files:
        path = Path(values_file)
        if not path.is_absolute() and not path.exists() and (VALUES_DIR / path).exists():
            path = VALUES_DIR / path
        merged = deep_merge(merged, read_values_file(path))
    return deep_merge(merged, values or {})


def merge_values(values_files: Iterable[str] = (), set_json: Iterable[str] = (), set_values: Iterable[str] = (),
                 set_string: Iterable[str] = ()) -> dict:
    """Helm's values.Options.MergeValues: files in order, then every --set-json, every --set, every --set-string.

    Helm applies the three kinds in that order whatever their order on the command line.
    """
    base: dict[str, Any] = {}
    for path in values_files:
        base = deep_merge(base, read_values_file(path))
    for value in set_json:
        trimmed = value.strip()
        if trimmed.startswith("{"):
            try:
                parsed = json.loads(trimmed, parse_constant=_no_constant)
            except ValueError:
                raise ValuesError(f"failed parsing --set-json data JSON: {value}") from None
            if not isinstance(parsed, dict):  # Go: json.Unmarshal of a non-object into a map fails
                raise ValuesError(f"failed parsing --set-json data JSON: {value}")
            base = deep_merge(base, parsed)
        else:
            try:
                parse_json(value, base)
            except ValuesError:
                raise ValuesError(f"failed parsing --set-json data {value}") from None
    for value in set_values:
        try:
            parse_into(value, base)
        except ValuesError as error:
            raise ValuesError(f"failed parsing --set data: {error}") from None
    for value in set_string:
        try:
            parse_into_string(value, base)
        except ValuesError as error:
            raise ValuesError(f"failed parsing --set-string data: {error}") from None
    return base


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


# --- Port of Helm v4 pkg/strvals/parser.go --------------------------------------------------------------

class _EOF(Exception):
    """io.EOF: the end of the set line (not an error for the caller of parse())."""


class _NotList(Exception):
    """strvals.ErrNotList: a value that does not start with '{'."""


def parse_into(text: str, dest: dict) -> None:
    """strvals.ParseInto: --set, typed scalars."""
    _Parser(text, dest, lambda runes: _typed_value(runes, False)).parse()


def parse_into_string(text: str, dest: dict) -> None:
    """strvals.ParseIntoString: --set-string, every value a string."""
    _Parser(text, dest, lambda runes: _typed_value(runes, True)).parse()


def parse_json(text: str, dest: dict) -> None:
    """strvals.ParseJSON: --set-json key1=jsonval1,key2=jsonval2 (an empty value is null)."""
    _Parser(text, dest, None, json_values=True).parse()


def _typed_value(value: str, as_string: bool) -> Any:
    """strvals.typedVal."""
    if as_string:
        return value
    lower = value.lower()
    if lower == "true":
        return True
    if lower == "false":
        return False
    if lower == "null":
        return None
    if value == "0":
        return 0
    # Go's strconv.ParseInt(val, 10, 64) for values not starting with 0.
    if value and value[0] != "0" and re.fullmatch(r"[+-]?[0-9]+", value):
        number = int(value)
        if -(2 ** 63) <= number < 2 ** 63:
            return number
    return value


def _go_type(value: Any) -> str:
    """The Go type name Helm's parser sees for a value, for its interface-conversion panics."""
    if value is None:
        return "nil"
    return {bool: "bool", int: "int64", float: "float64", str: "string", list: "[]interface {}",
            dict: "map[string]interface {}"}.get(type(value), type(value).__name__)


def _conversion_panic(value: Any, wanted: str) -> ValuesError:
    return ValuesError(f"unable to parse key: interface conversion: interface {{}} is {_go_type(value)}, not {wanted}")


def _go_quote(text: str) -> str:
    """Go's %q for the plain strings these messages quote."""
    return json.dumps(text, ensure_ascii=False)


def _go_quote_runes(text: str) -> str:
    """Go's %q of a []rune: each rune single-quoted, e.g. ['x' 'y']."""
    def rune(char: str) -> str:
        return {"'": "\\'", '"': '"'}.get(char) or json.dumps(char, ensure_ascii=False)[1:-1]
    return "[" + " ".join(f"'{rune(char)}'" for char in text) + "]"


class _Parser:
    def __init__(self, text: str, data: dict, reader: Callable[[str], Any] | None, json_values: bool = False):
        self.text, self.pos, self.data, self.reader, self.json_values = text, 0, data, reader, json_values

    # The rune reader (bytes.Buffer in Go).
    def _read(self) -> str:
        if self.pos >= len(self.text):
            raise _EOF()
        self.pos += 1
        return self.text[self.pos - 1]

    def _unread(self) -> None:
        self.pos -= 1

    def _runes_until(self, stop: str) -> tuple[str, str]:
        """Characters up to one of `stop` (consumed, returned as last); `\\` escapes the next character.

        Raises _EOF carrying what was read when the line ends first.
        """
        runes = []
        while True:
            try:
                char = self._read()
            except _EOF:
                raise _EOF("".join(runes)) from None
            if char in stop:
                return "".join(runes), char
            if char == "\\":
                try:
                    runes.append(self._read())
                except _EOF:
                    raise _EOF("".join(runes)) from None
                continue
            runes.append(char)

    def parse(self) -> None:
        while True:
            try:
                self._key(self.data, 0)
            except _EOF:
                return

    def _key(self, data: dict, level: int) -> None:
        try:
            key, last = self._runes_until("=[,.")
        except _EOF as end:
            if not end.args[0]:
                raise
            raise ValuesError(f"key {_go_quote(end.args[0])} has no value") from None
        if last == "[":
            try:
                index = self._key_index()
            except ValuesError as error:
                raise ValuesError(f"error parsing index: {error}") from None
            current = data.get(key, None) if key in data else []
            if key in data and not isinstance(current, list):
                raise _conversion_panic(current, "[]interface {}")
            items, error = self._list_item(list(current), index, level)
            _set(data, key, items)
            if error is not None:
                raise error
            return
        if last == "=":
            if self.json_values:
                if self._empty_value():
                    _set(data, key, None)
                    return
                _set(data, key, self._json_value())
                self._empty_value()
                return
            try:
                items = self._value_list()
            except _EOF:
                _set(data, key, "")
                raise
            except _NotList:
                # As in Go, the end of the line after a plain value is no error: the next key() meets it.
                try:
                    runes = self._value()
                except _EOF as end:
                    runes = end.args[0]
                _set(data, key, self.reader(runes))
                return
            _set(data, key, items)
            return
        if last == ",":
            _set(data, key, "")
            raise ValuesError(f"key {_go_quote(key)} has no value (cannot end with ,)")
        # last == ".": a nested map.
        level += 1
        if level > MAX_NESTED_NAME_LEVEL:
            raise ValuesError(f"value name nested level is greater than maximum supported nested level of "
                              f"{MAX_NESTED_NAME_LEVEL}")
        inner = data[key] if key in data else {}
        if not isinstance(inner, dict):
            raise _conversion_panic(inner, "map[string]interface {}")
        try:
            self._key(inner, level)
        except _EOF:
            if inner:
                _set(data, key, inner)
            raise
        if not inner:
            raise ValuesError(f"key map {_go_quote(key)} has no value")
        _set(data, key, inner)

    def _key_index(self) -> int:
        try:
            text, _ = self._runes_until("]")
        except _EOF:
            raise ValuesError("EOF") from None
        if not re.fullmatch(r"[+-]?[0-9]+", text):
            raise ValuesError(f'strconv.Atoi: parsing {_go_quote(text)}: invalid syntax')
        return int(text)

    def _list_item(self, items: list, index: int, level: int) -> tuple[list, ValuesError | _EOF | None]:
        """strvals.listItem: the value after `]`; returns the list and the error (None, _EOF or a ValuesError)."""
        if index < 0:
            return items, ValuesError(f"negative {index} index not allowed")
        try:
            rest, last = self._runes_until("[.=")
        except _EOF as end:
            if end.args[0]:
                return items, ValuesError(f"unexpected data at end of array index: {_go_quote_runes(end.args[0])}")
            return items, _EOF()
        if rest:
            return items, ValuesError(f"unexpected data at end of array index: {_go_quote_runes(rest)}")
        if last == "=":
            if self.json_values:
                if self._empty_value():
                    return _set_index(items, index, None)
                items, error = _set_index(items, index, self._json_value())
                if error is not None:
                    return items, error
                self._empty_value()
                return items, None
            try:
                value = self._value_list()
            except _EOF:
                return _set_index(items, index, "")
            except _NotList:
                try:
                    runes = self._value()
                except _EOF as end:
                    runes = end.args[0]
                return _set_index(items, index, self.reader(runes))
            return _set_index(items, index, value)
        if last == "[":
            try:
                next_index = self._key_index()
            except ValuesError as error:
                return items, ValuesError(f"error parsing index: {error}")
            current: list = []
            if len(items) > index and items[index] is not None:
                if not isinstance(items[index], list):
                    return items, _conversion_panic(items[index], "[]interface {}")
                current = list(items[index])
            inner_list, error = self._list_item(current, next_index, level)
            if error is not None:
                return items, error
            return _set_index(items, index, inner_list)
        # last == ".": a map inside the list.
        inner: dict = {}
        if len(items) > index:
            if isinstance(items[index], dict):
                inner = items[index]
            else:  # indices out of order: Helm starts a new map there
                items[index] = inner
        try:
            self._key(inner, level)
        except _EOF as end:
            return items, end
        except ValuesError as error:
            return items, error
        return _set_index(items, index, inner)

    def _empty_value(self) -> bool:
        """strvals.emptyVal: skip blanks; True at a comma (consumed) or the end, False before anything else."""
        while True:
            try:
                char = self._read()
            except _EOF:
                return True
            if char == ",":
                return True
            if not char.isspace():
                self._unread()
                return False

    def _json_value(self) -> Any:
        """One JSON document from here on (Go's json.Decoder), consumed."""
        decoder = json.JSONDecoder(parse_constant=_no_constant)
        try:
            value, end = decoder.raw_decode(self.text, self.pos)
        except ValueError as error:
            raise ValuesError(str(error)) from None
        self.pos = end
        return value

    def _value(self) -> str:
        runes, _ = self._runes_until(",")
        return runes

    def _value_list(self) -> list:
        """strvals.valList: `{a,b}`; raises _NotList when the value does not start with `{`."""
        char = self._read()
        if char != "{":
            self._unread()
            raise _NotList()
        items = []
        while True:
            try:
                runes, last = self._runes_until(",}")
            except _EOF:
                raise ValuesError("list must terminate with '}'") from None
            if last == "}":
                try:
                    if self._read() != ",":
                        self._unread()
                except _EOF:
                    pass
                items.append(self.reader(runes))
                return items
            items.append(self.reader(runes))


def _set(data: dict, key: str, value: Any) -> None:
    if key != "":
        data[key] = value


def _set_index(items: list, index: int, value: Any) -> tuple[list, ValuesError | None]:
    if index < 0:
        return items, ValuesError(f"negative {index} index not allowed")
    if index > MAX_INDEX:
        return items, ValuesError(f"index of {index} is greater than maximum supported index of {MAX_INDEX}")
    if len(items) <= index:
        items = items + [None] * (index + 1 - len(items))
    items[index] = value
    return items, None
