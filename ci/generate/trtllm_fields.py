"""TensorRT-LLM engine keys per release: write the chart's lists from the shared per-release files, and compare a
release's wheel with its list.

usage: python -m ci.generate trtllm-fields [--check] [TRTLLM_DIR]
           Write charts/gpt-oss/templates/engine/_trtllm-fields.tpl from every llmargs-fields-<release>.json in
           TRTLLM_DIR (default ../shared/trtllm; RELEASES-FACTS.md there says how each was read): one key list per
           release, and the shared llmargs-fields.json, which checks only a trtllm-serve image of a release with no
           list of its own (trtllmServe.allowUnlistedRelease). --check writes nothing and exits 1 when the chart's
           copy differs from what the files give.
       python -m ci.generate trtllm-fields --release 1.3.0rc29 [--wheel PATH|URL] [TRTLLM_DIR]
           Read the release's wheel and print where its fields differ from llmargs-fields-1.3.0rc29.json (exit 1
           when they do). Without --wheel the wheel comes from PyPI's JSON API (file name, URL, sha256); only
           tensorrt_llm/llmapi/llm_args.py and the modules its classes come from are fetched, by HTTP range
           requests on the zip's central directory. --wheel takes a local wheel or a URL that serves ranges.
       python -m ci.generate trtllm-fields --release 1.3.0rc29 --find trtllm_num_requests_waiting [--under tensorrt_llm/metrics/]
           Print member:line of each line of the wheel's Python source that contains the text (the citations of
           docs/operations.md).

Each release's list holds the TorchLlmArgs fields (deprecated ones included, since TensorRT-LLM still accepts
them), the keys of the nested configs its file has (a config the file has no data for goes unchecked), the members
of speculative_config per decoding_type, the values a Literal field takes, and what the other releases say about
each key one of them lacks (removed in, replaced by, arrived in): the refusal names it. Unknown keys in an
extra-engine-args YAML are a hard error (extra=forbid), so the chart refuses them at render.
tests/chart/engine/test_engine.py fails when the chart's copy and the shared files differ.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import io
import json
import posixpath
import re
import sys
import tarfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

from ci import shared_dir

from . import REPO, chart_json, write_generated

TARGET = REPO / "charts" / "gpt-oss" / "templates" / "engine" / "_trtllm-fields.tpl"
SHARED = shared_dir() / "trtllm"
SHARED_LIST = "llmargs-fields.json"
PYPI_JSON = "https://pypi.org/pypi/tensorrt-llm/json"
LLM_ARGS = "tensorrt_llm/llmapi/llm_args.py"
ROOT_CLASS = "TorchLlmArgs"
# Engine key -> the config class of its value, where a release's file has that class.
NESTED = {
    "kv_cache_config": "KvCacheConfig", "cuda_graph_config": "CudaGraphConfig", "moe_config": "MoeConfig",
    "attention_dp_config": "AttentionDpConfig", "scheduler_config": "SchedulerConfig",
    "cache_transceiver_config": "CacheTransceiverConfig", "torch_compile_config": "TorchCompileConfig",
    "peft_cache_config": "PeftCacheConfig", "nvfp4_gemm_config": "Nvfp4GemmConfig",
    "kv_connector_config": "KvCacheConnectorConfig", "ray_placement_config": "RayPlacementConfig",
    "cp_config": "CpConfig", "dwdp_config": "DwdpConfig", "layer_wise_benchmarks_config": "LayerwiseBenchmarksConfig",
    "prometheus_metrics_config": "PrometheusMetricsConfig", "sleep_config": "SleepConfig",
    "multimodal_config": "MultimodalConfig", "encoder_cuda_graph_config": "EncodeCudaGraphConfig",
    "reorder_policy_config": "ReorderRequestPolicyConfig",
}
# Keys a release's YAML takes besides its field names, where the file's `aliases` say so: (engine key of the
# config, "" for the top level; the alias; the aliases section and field whose note names it).
ALIAS_KEYS = [
    ("", "hf_revision", "LlmArgs", "revision"),
    ("speculative_config", "speculative_model_dir", "DecodingBaseConfig (all speculative configs)", "speculative_model"),
]
# What took a key's place, as RELEASES-FACTS.md ("Differences between releases") names it: old -> (new, words).
# tests/chart/engine/test_engine.py checks each against the lists (the old one gone where the new one arrived).
REPLACEMENTS = {
    "enable_sleep": ("sleep_config", ""),
    "video_pruning_rate": ("multimodal_config.video_pruning_rate", ""),
    "speculative_config.acceptance_window": ("speculative_config.acceptance_rate_window_size", ""),
    "speculative_config.acceptance_length_threshold": ("speculative_config.acceptance_rate_threshold",
                                                       ", a rate in [0, 1] now"),
    "speculative_config.decoding_type=DraftTarget": ("speculative_config.decoding_type=Draft_Target", ""),
    "speculative_config.decoding_type=UserProvided": ("speculative_config.decoding_type=User_Provided", ""),
}
# Removed keys with nothing in their place, and what the facts say about them.
REMOVALS = {
    "fail_fast_on_attention_window_too_large": "only the TensorRT engine backend's arguments keep it, and the chart "
                                               "runs the PyTorch backend",
    "sampler_type": "TorchSampler is the default sampler from then on",
}
# How a list was read, from what its file's `source` says, first match: (phrase, tag for test ids, a user's words).
BASES = [
    ("assembled from autodoc pages", "assembled", "assembled from the release's documentation, partly inferred"),
    ("NOT read in full", "inferred", "inferred: the list of {neighbour}, whose source matched this release's "
                                     "wherever the two were compared"),
    ("Read in full", "read", "read in full from the release's own source"),
    ("read from char", "read-in-part", "read from the release's own source, nearly all of it"),
    ("NOT READ", "not-read", "not read: the list of {base} corrected with the documentation of {around}, partly "
                             "inferred"),
]
SHARED_WORDS = "a shared list read from a 1.2/1.3-era TensorRT-LLM source, of no release in particular"


class NoWheel(Exception):
    """PyPI has no wheel of the release to read."""


class RangeReader(io.RawIOBase):
    """A read-only, seekable file over HTTP range requests, in 256 KiB blocks (zipfile reads the central directory
    at the end, then each member's header and data)."""
    BLOCK = 256 * 1024

    def __init__(self, url: str, size: int | None = None):
        super().__init__()
        self.url, self.pos, self.blocks, self.requests = url, 0, {}, 0
        if size is None:
            with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=60) as response:
                size = int(response.headers["Content-Length"])
        self.size = size

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.pos = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence] + offset
        return self.pos

    def _block(self, index: int) -> bytes:
        if index not in self.blocks:
            start, end = index * self.BLOCK, min(self.size, (index + 1) * self.BLOCK) - 1
            request = urllib.request.Request(self.url, headers={"Range": f"bytes={start}-{end}"})
            with urllib.request.urlopen(request, timeout=120) as response:
                if response.status != 206:
                    raise OSError(f"{self.url} answered {response.status} to a range request")
                self.blocks[index] = response.read()
            self.requests += 1
        return self.blocks[index]

    def read(self, size: int = -1) -> bytes:
        end = self.size if size is None or size < 0 else min(self.size, self.pos + size)
        out = bytearray()
        while self.pos < end:
            block = self._block(self.pos // self.BLOCK)
            offset = self.pos % self.BLOCK
            chunk = block[offset:offset + end - self.pos]
            out += chunk
            self.pos += len(chunk)
        return bytes(out)

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def pypi_files(release: str) -> list[dict]:
    with urllib.request.urlopen(PYPI_JSON, timeout=60) as response:
        releases = json.load(response)["releases"]
    if release not in releases:
        raise NoWheel(f"PyPI has no tensorrt-llm {release}")
    return [dict(f, url=urllib.parse.urljoin(PYPI_JSON, f["url"])) for f in releases[release]]


def _stub_index(sdist: dict) -> str:
    """The index a wheel-stub sdist downloads the real wheel from at install, '' when it is no stub."""
    with urllib.request.urlopen(sdist["url"], timeout=120) as response:
        data = response.read()
    if hashlib.sha256(data).hexdigest() != sdist["digests"]["sha256"]:
        raise OSError(f"{sdist['filename']}: sha256 differs from PyPI's")
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        for member in archive.getmembers():
            if member.name.endswith("/pyproject.toml"):
                text = archive.extractfile(member).read().decode()
                if "wheel_stub" in text:
                    return next((line.split("=", 1)[1].strip().strip('"') for line in text.splitlines()
                                 if line.strip().startswith("index_url")), "another index")
    return ""


def pypi_wheel(release: str) -> dict:
    """PyPI's record (filename, url, digests, size) of the release's x86_64 Linux wheel."""
    files = pypi_files(release)
    wheels = [f for f in files if f["packagetype"] == "bdist_wheel" and "x86_64" in f["filename"]]
    if wheels:
        return wheels[0]
    served = ", ".join(f"{f['filename']} ({f['packagetype']}, {f['size']} bytes)" for f in files) or "nothing"
    stubs = [_stub_index(f) for f in files if f["packagetype"] == "sdist"]
    why = (f": a wheel-stub sdist, whose install downloads the wheel from {stubs[0]}" if stubs and stubs[0] else "")
    raise NoWheel(f"PyPI serves no wheel of tensorrt-llm {release}, only {served}{why}; read a wheel from there "
                  f"with --wheel PATH|URL")


class Wheel:
    """The Python members of one wheel, read on demand."""

    def __init__(self, source: str, size: int | None = None):
        self.source = source
        self.file = RangeReader(source, size) if source.startswith(("http://", "https://")) else open(source, "rb")
        self.zip = zipfile.ZipFile(self.file)
        self.names = set(self.zip.namelist())

    def text(self, member: str) -> str:
        return self.zip.read(member).decode()

    def sha256(self) -> str:
        """The whole file's sha256 (local wheels only; a remote one's comes from PyPI)."""
        digest = hashlib.sha256()
        with open(self.source, "rb") as file:
            for chunk in iter(lambda: file.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest()


def _module_member(module: str, level: int, importer: str) -> str | None:
    """The wheel member a `from module import ...` in member `importer` reads, None outside tensorrt_llm."""
    if level:
        base = posixpath.dirname(importer)
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        path = posixpath.join(base, *(module.split(".") if module else []))
    elif module.startswith("tensorrt_llm"):
        path = module.replace(".", "/")
    else:
        return None
    return path


def _is_field(node: ast.AST) -> str | None:
    """The field name of a pydantic model body statement, None for anything else."""
    if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
        return None
    name = node.target.id
    annotation = ast.unparse(node.annotation)
    if name.startswith("_") or annotation.startswith(("ClassVar", "typing.ClassVar")):
        return None
    if isinstance(node.value, ast.Call) and ast.unparse(node.value.func).endswith("PrivateAttr"):
        return None
    return name


class Source:
    """Class definitions of a wheel's modules, followed across `from ... import` within tensorrt_llm."""

    def __init__(self, read):
        self.read, self.modules = read, {}

    def module(self, member: str) -> tuple[dict, dict] | None:
        """(classes, imported name -> (member, original name)) of a member, None when the wheel lacks it."""
        if member not in self.modules:
            try:
                tree = ast.parse(self.read(member))
            except KeyError:
                self.modules[member] = None
                return None
            classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
            imports = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    path = _module_member(node.module or "", node.level, member)
                    for alias in node.names if path else ():
                        imports[alias.asname or alias.name] = (path, alias.name)
            self.modules[member] = (classes, imports)
        return self.modules[member]

    def find(self, name: str, member: str, depth: int = 0) -> tuple[ast.ClassDef, str] | None:
        """The class `name` as seen from `member`: defined there, or imported from a module or package."""
        found = self.module(member)
        if not found or depth > 8:
            return None
        classes, imports = found
        if name in classes:
            return classes[name], member
        if name in imports:
            path, original = imports[name]
            for candidate in (path + ".py", path + "/__init__.py"):
                hit = self.find(original, candidate, depth + 1)
                if hit:
                    return hit
        return None

    def fields(self, name: str, member: str = LLM_ARGS) -> list[str]:
        """Pydantic fields of a class: its bases' first (the order pydantic collects them), then its own."""
        hit = self.find(name, member)
        if hit is None:
            return []
        node, where = hit
        names: list[str] = []
        for base in node.bases:
            base_name = ast.unparse(base).split("[")[0].split(".")[-1]
            for field in self.fields(base_name, where):
                if field not in names:
                    names.append(field)
        for statement in node.body:
            field = _is_field(statement)
            if field and field not in names:
                names.append(field)
        return names


def read_fields(read, classes=()) -> dict[str, list[str]]:
    """{"LlmArgs": TorchLlmArgs fields, <config class>: its fields} from a reader of wheel members."""
    source = Source(read)
    if source.module(LLM_ARGS) is None:
        raise KeyError(f"the wheel has no {LLM_ARGS}")
    fields = {"LlmArgs": source.fields(ROOT_CLASS)}
    if not fields["LlmArgs"]:
        raise KeyError(f"{LLM_ARGS} defines no {ROOT_CLASS} with fields")
    for config_class in classes:
        fields[config_class] = source.fields(config_class)
    return fields


def find_text(wheel: Wheel, text: str, under: str) -> list[str]:
    """member:line: line, for every line of the wheel's Python members under `under` that contains text."""
    hits = []
    for member in sorted(n for n in wheel.names if n.startswith(under) and n.endswith(".py")):
        for number, line in enumerate(wheel.text(member).splitlines(), 1):
            if text in line:
                hits.append(f"{member}:{number}: {line.strip()}")
    return hits


def open_release(release: str, wheel_arg: str | None) -> tuple[Wheel, dict]:
    """The wheel of a release and its source record (wheel file name, sha256 and where it was read)."""
    if wheel_arg:
        wheel = Wheel(wheel_arg)
        name = posixpath.basename(urllib.parse.urlparse(wheel_arg).path)
        sha256 = wheel.sha256() if not wheel_arg.startswith(("http://", "https://")) else None
        if sha256 is None:  # a remote wheel: PyPI's digest, when PyPI lists the same file
            sha256 = next((f["digests"]["sha256"] for f in pypi_files(release) if f["filename"] == name), "unknown")
        return wheel, {"wheel": name, "sha256": sha256, "from": "--wheel"}
    record = pypi_wheel(release)
    wheel = Wheel(record["url"], record["size"])
    return wheel, {"wheel": record["filename"], "sha256": record["digests"]["sha256"], "from": "PyPI JSON API"}



def version_key(release: str) -> tuple:
    """Order of TensorRT-LLM releases: 1.2.0 < 1.2.1 < 1.3.0rc14 < 1.3.0rc29 < 1.3.0."""
    match = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(?:rc(\d+))?", release)
    if not match:
        raise ValueError(f"{release}: not a TensorRT-LLM release (MAJOR.MINOR.PATCH[rcN])")
    major, minor, patch, rc = match.groups()
    return int(major), int(minor), int(patch), int(rc) if rc else 1 << 30


def release_files(trtllm_dir: Path) -> dict[str, dict]:
    """{release: its llmargs-fields-<release>.json}, oldest first."""
    files = {path.name.removeprefix("llmargs-fields-").removesuffix(".json"): json.loads(path.read_text())
             for path in trtllm_dir.glob("llmargs-fields-*.json")}
    if not files:
        raise FileNotFoundError(f"no llmargs-fields-<release>.json in {trtllm_dir}")
    return dict(sorted(files.items(), key=lambda item: version_key(item[0])))


def basis(data: dict) -> tuple[str, str]:
    """(tag, a user's words) of how a release's list was read, from its file's `source`."""
    for phrase, tag, words in BASES:
        if phrase in data["source"]:
            neighbour = re.search(r"therefore the ([0-9][\w.]*) lists", data["source"])
            if "{neighbour}" in words and not neighbour:
                raise ValueError(f"{data['source'][:80]}...: says it is inferred but names no release it copies")
            # An unread release's list: a read one's, corrected with the pages of the releases around it.
            base = re.search(r"This file = the ([0-9][\w.]*) file", data["source"])
            around = re.search(r"corrected with the ([0-9][\w.]*) and ([0-9][\w.]*) ", data["source"])
            if "{base}" in words and not (base and around):
                raise ValueError(f"{data['source'][:80]}...: says it was not read but names no list it corrects")
            return tag, words.format(neighbour=neighbour.group(1) if neighbour else "",
                                     base=base.group(1) if base else "",
                                     around=" and ".join(around.groups()) if around else "")
    raise ValueError(f"{data['source'][:80]}...: none of {[b[0] for b in BASES]}; add how it was read to BASES")


def _unique(names) -> list[str]:
    return list(dict.fromkeys(names))


def _class_name(text: str) -> str:
    """The class of a union member entry ("QSASparseAttentionConfig (qsa)" -> QSASparseAttentionConfig)."""
    return text.split()[0]


def release_keys(data: dict) -> dict:
    """One release's list: top, nested (engine key -> keys of its config, a union's: every member's), unions
    (speculative_config: discriminator and members per value), values (key -> the only values it takes)."""
    fields, aliases = data["fields"], data.get("aliases", {})
    for cls, names in fields.items():
        if cls in data.get("counts", {}) and data["counts"][cls] != len(names):
            raise ValueError(f"{data['notes'].get('release')}: {cls} lists {len(names)} fields, counts says "
                             f"{data['counts'][cls]}")
    top = list(fields["LlmArgs"])
    nested = {key: list(fields[cls]) for key, cls in NESTED.items() if key in top and cls in fields}
    unions = {}
    for key, union in data.get("unions", {}).items():
        if key not in top:
            continue
        if isinstance(union, str):  # "Union[DecodeCudaGraphConfig, EncodeCudaGraphConfig, None] (...)"
            classes = [c for c in re.findall(r"\b([A-Z]\w*Config)\b", union) if c in fields]
            nested[key] = _unique(f for c in classes for f in fields[c])
            continue
        members = union["members"]
        if isinstance(members, list):  # member classes, no discriminator values
            nested[key] = _unique(f for m in members if _class_name(m) in fields for f in fields[_class_name(m)])
            continue
        pairs = [(a, _class_name(b)) if not a.endswith("Config") else (b, a) for a, b in members.items()]
        discriminator = union["discriminator"].split()[0]
        by_value = {value: fields[cls] for value, cls in pairs if cls in fields}
        unions[key] = {"discriminator": discriminator, "members": by_value}
        nested[key] = _unique(f for names in by_value.values() for f in names)
    for key, alias, section, field in ALIAS_KEYS:
        note = aliases.get(section, {}).get(field, "") if isinstance(aliases.get(section), dict) else ""
        if alias not in note:
            continue
        if not key:
            top.append(alias)
        elif key in nested:
            nested[key].append(alias)
            for names in unions.get(key, {}).get("members", {}).values():
                names.append(alias)
    values = {}
    for key, detail in data.get("deprecated_detail", {}).get("LlmArgs", {}).items():
        if literal := re.search(r"Literal\[([^\]]*)\]", detail):
            values[key] = re.findall(r"'([^']*)'", literal.group(1))
    for key, union in unions.items():
        values[f"{key}.{union['discriminator']}"] = list(union["members"])
    return {"top": top, "nested": nested, "unions": unions, "values": values}


def _scopes(keys: dict) -> dict[str, set]:
    """Every name a list accepts, by scope: "" (top-level keys), "<key>." (a nested config's keys) and
    "<key>.<field>=" (the values a field takes)."""
    scopes = {"": set(keys["top"])}
    scopes.update({f"{key}.": set(names) for key, names in keys["nested"].items()})
    scopes.update({f"{path}=": set(allowed) for path, allowed in keys["values"].items()})
    return scopes


def _split(path: str) -> tuple[str, str]:
    """(scope, name) of a path: "a.b=c" -> ("a.b=", "c"), "a.b" -> ("a.", "b"), "a" -> ("", "a")."""
    if "=" in path:
        scope, name = path.rsplit("=", 1)
        return scope + "=", name
    scope, _, name = path.rpartition(".")
    return (scope + "." if scope else ""), name


def _label(path: str) -> str:
    scope, name = _split(path)
    return f"{scope[:-1]}: {name}" if scope.endswith("=") else path


def _gone(path: str, release: str, order: list[str], scopes: dict) -> str:
    """What became of a name after the last release before `release` that had it: "was removed in X" (with what
    the facts say) or "was replaced by Y in X"."""
    scope, name = _split(path)
    gone_in = release
    for other in reversed(order[:order.index(release)]):
        if scope not in scopes[other]:
            continue
        if name in scopes[other][scope]:
            break
        gone_in = other
    if path in REPLACEMENTS:
        new, words = REPLACEMENTS[path]
        new_scope, new_name = _split(new)
        return f"was replaced by {new_name if new_scope.endswith('=') else new} in {gone_in}{words}"
    return f"was removed in {gone_in}" + (f": {REMOVALS[path]}" if path in REMOVALS else "")


def history(lists: dict[str, dict]) -> dict[str, dict[str, str]]:
    """{release: {path: a sentence}} for every name another release accepts and this one does not: when it was
    removed (and what replaced it, where the facts name it), or when it arrived (and what this release has in
    its place). path: "key", "key.subkey" or "key.field=value"; "key=" says since when a Literal key takes only
    some values."""
    order = list(lists)
    scopes = {release: _scopes(keys) for release, keys in lists.items()}
    every: dict[str, set] = {}
    for by_scope in scopes.values():
        for scope, names in by_scope.items():
            every.setdefault(scope, set()).update(names)
    out = {}
    for release in order:
        notes = {}
        for scope, names in sorted(every.items()):
            if scope not in scopes[release]:
                continue  # no data for this config in the release's file: it goes unchecked
            for name in sorted(names - scopes[release][scope]):
                path = f"{scope}{name}"
                having = [r for r in order if scope in scopes[r] and name in scopes[r][scope]]
                if version_key(having[0]) < version_key(release):
                    notes[path] = f"{_label(path)} {_gone(path, release, order, scopes)}"
                    continue
                sentence = f"{_label(path)} arrived in {having[0]}"
                later = [r for r in order if version_key(r) > version_key(having[-1]) and scope in scopes[r]]
                if later:
                    sentence += f" and {_gone(path, later[0], order, scopes)}"
                for old, (new, _) in REPLACEMENTS.items():
                    old_scope, old_name = _split(old)
                    if (new == path or new.startswith(path + ".")) and old_name in scopes[release].get(old_scope, ()):
                        sentence += f"; {release} has {_label(old)} instead"
                notes[path] = sentence
        for path, allowed in lists[release]["values"].items():
            if "." not in path:  # a Literal top-level key (backend), not a union's discriminator
                first = next(r for r in order if path in lists[r]["values"])
                notes[f"{path}="] = f"{path} takes only {', '.join(allowed)} from {first} on"
        out[release] = dict(sorted(notes.items()))
    return out


def _define(name: str, comment: list[str], data: dict) -> list[str]:
    return ["", "{{/*", *comment, f'Usage: {{{{ $keys := include "{name}" . | fromJson }}}}', "*/}}",
            f'{{{{- define "{name}" -}}}}', chart_json(data), "{{- end }}"]


def _list_body(keys: dict) -> dict:
    body = {"top": keys["top"], "nested": keys["nested"]}
    if keys.get("unions"):
        body["unions"] = {key: {"discriminator": union["discriminator"], "members": union["members"]}
                          for key, union in keys["unions"].items()}
    if keys.get("values"):
        body["values"] = keys["values"]
    return body


def chart_text(trtllm_dir: Path) -> str:
    """The generated template: the index of releases, then one define per release and one for the shared list."""
    files = release_files(trtllm_dir)
    shared = json.loads((trtllm_dir / SHARED_LIST).read_text())
    lists = {release: release_keys(data) for release, data in files.items()}
    notes = history(lists)
    bases = {release: basis(data) for release, data in files.items()}
    index = {"order": list(files),
             "releases": {release: {"basis": tag, "words": words} for release, (tag, words) in bases.items()},
             "shared": {"words": SHARED_WORDS}}
    lines = ["{{- /* TensorRT-LLM engine keys per release. Generated by python -m ci.generate trtllm-fields from the shared "
             "trtllm/llmargs-fields-<release>.json files; do not edit. */}}"]
    lines += _define("gpt-oss.trtllmKeyLists", [
        "The TensorRT-LLM releases with an engine key list of their own, oldest first, each with how its list was read",
        "(basis: read, read-in-part, inferred, assembled or not-read; words: the same for a reader), and the shared list's words.",
        "Generated by python -m ci.generate trtllm-fields; do not edit. Sources:",
        *[f"  {release}: {data['source'].split('. ')[0]}" for release, data in files.items()],
        f"  shared: {SHARED_LIST}: {shared['source'].split('. ')[0]}",
    ], index)
    for release, keys in lists.items():
        lines += _define(f"gpt-oss.trtllmKeys.{release}", [
            f"The engine keys of TensorRT-LLM {release}, {bases[release][1]}:",
            "top (TorchLlmArgs fields and the YAML's aliases), nested (engine key -> keys of its config; a config the",
            "release's file has no data for is not listed), unions (speculative_config: the keys of each decoding_type),",
            "values (the only values a key takes). Generated by python -m ci.generate trtllm-fields; do not edit.",
        ], _list_body(keys))
        lines += _define(f"gpt-oss.trtllmKeyHistory.{release}", [
            f"What the other releases say about each name TensorRT-LLM {release} lacks (path -> a sentence; path: key,",
            "key.subkey or key.field=value, and key= for a key that takes only some values): read only to refuse.",
            "Generated by python -m ci.generate trtllm-fields; do not edit.",
        ], notes[release])
    shared_keys = {"top": shared["fields"]["LlmArgs"],
                   "nested": {key: shared["fields"][cls] for key, cls in NESTED.items() if cls in shared["fields"]}}
    lines += _define("gpt-oss.trtllmKeys.shared", [
        "The shared engine key list, for a trtllm-serve image of a release with no list of its own",
        f"(trtllmServe.allowUnlistedRelease): {SHARED_WORDS}.",
        "Generated by python -m ci.generate trtllm-fields; do not edit.",
    ], _list_body(shared_keys))
    return "\n".join(lines) + "\n"


def compare_wheel(fields: dict[str, list[str]], data: dict) -> list[str]:
    """Lines naming each class whose fields in the wheel differ from the release's file."""
    lines = []
    for cls, names in data["fields"].items():
        read = fields.get(cls, [])
        if set(read) != set(names):
            lines.append(f"  {cls}: only in the wheel: {sorted(set(read) - set(names)) or 'none'}; "
                         f"only in the file: {sorted(set(names) - set(read)) or 'none'}")
    return lines


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("trtllm_dir", nargs="?", default=str(SHARED),
                        help="folder with llmargs-fields-<release>.json and llmargs-fields.json")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the chart's copy differs")
    parser.add_argument("--release", help="read this TensorRT-LLM release's wheel")
    parser.add_argument("--wheel", help="a local wheel or a URL serving ranges, instead of PyPI's")
    parser.add_argument("--find", help="print member:line of each source line with this text, and stop")
    parser.add_argument("--under", default="tensorrt_llm/", help="with --find: members under this path")
    args = parser.parse_args(argv)
    trtllm_dir = Path(args.trtllm_dir)
    if args.release:
        try:
            wheel, source = open_release(args.release, args.wheel)
        except NoWheel as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        if args.find:
            print(f"{source['wheel']} (sha256 {source['sha256']}):")
            print("\n".join(find_text(wheel, args.find, args.under)) or "  (no line has it)")
            return 0
        data = json.loads((trtllm_dir / f"llmargs-fields-{args.release}.json").read_text())
        differences = compare_wheel(read_fields(wheel.text, [c for c in data["fields"] if c != "LlmArgs"]), data)
        print(f"{args.release}: {source['wheel']} (sha256 {source['sha256']}) "
              + ("differs from its list:\n" + "\n".join(differences) if differences else "matches its list"))
        return 1 if differences else 0
    return write_generated(TARGET, chart_text(trtllm_dir), args.check, "trtllm-fields", source=str(trtllm_dir),
                           what=f"lists of {', '.join(release_files(trtllm_dir))}, and the shared one")
