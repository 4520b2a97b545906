"""TensorRT-LLM engine keys per release: read them from a release's wheel, and write the chart's copy.

usage: python -m ci.gptoss_ci.sync_trtllm_fields [path/to/llmargs-fields.json]
           Write charts/gpt-oss/templates/engine/_trtllm-fields.tpl from ci/trtllm-fields.json (the lists read from
           wheels) and the shared list (default ../shared/trtllm/llmargs-fields.json), which stands in for every
           release the chart runs that has no list of its own yet.
       python -m ci.gptoss_ci.sync_trtllm_fields --release 1.3.0rc29 [--wheel PATH|URL]
           Read the release's wheel, record its fields in ci/trtllm-fields.json, then write the chart's copy.
           Without --wheel the wheel comes from PyPI's JSON API (file name, URL, sha256); only
           tensorrt_llm/llmapi/llm_args.py and the modules its classes come from are fetched, by HTTP range
           requests on the zip's central directory. --wheel takes a local wheel or a URL that serves ranges.
       python -m ci.gptoss_ci.sync_trtllm_fields --release 1.3.0rc29 --find trtllm_num_requests_waiting [--under tensorrt_llm/metrics/]
           Print member:line of each line of the wheel's Python source that contains the text (the citations of
           docs/operations.md).

The fields are the pydantic fields (annotated class attributes, no ClassVar, no private ones) of TorchLlmArgs and
its bases and of the nested config classes the chart validates, read with `ast` (importing tensorrt_llm needs CUDA).
Unknown keys in an extra-engine-args YAML are a hard error (extra=forbid), so the chart refuses them at render.
tests/test_engine.py fails when the chart's copy and its sources differ.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import io
import json
import posixpath
import sys
import tarfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

from . import REPO
REGISTRY = REPO / "ci" / "trtllm-fields.json"
TARGET = REPO / "charts" / "gpt-oss" / "templates" / "engine" / "_trtllm-fields.tpl"
PYPI_JSON = "https://pypi.org/pypi/tensorrt-llm/json"
LLM_ARGS = "tensorrt_llm/llmapi/llm_args.py"
ROOT_CLASS = "TorchLlmArgs"
# The releases the chart runs (gpt-oss.trtllmRelease): Dynamo 1.6 line, Dynamo 1.2 line, trtllm-serve's old and
# new default.
RELEASES = ["1.3.0rc29", "1.3.0rc14", "1.2.0"]
NESTED = {  # engine key -> config class of its value
    "cuda_graph_config": "CudaGraphConfig", "moe_config": "MoeConfig", "kv_cache_config": "KvCacheConfig",
    "cache_transceiver_config": "CacheTransceiverConfig", "attention_dp_config": "AttentionDpConfig",
    "scheduler_config": "SchedulerConfig", "torch_compile_config": "TorchCompileConfig",
}


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


def read_fields(read) -> dict[str, list[str]]:
    """{"LlmArgs": TorchLlmArgs fields, <config class>: its fields} from a reader of wheel members."""
    source = Source(read)
    if source.module(LLM_ARGS) is None:
        raise KeyError(f"the wheel has no {LLM_ARGS}")
    fields = {"LlmArgs": source.fields(ROOT_CLASS)}
    if not fields["LlmArgs"]:
        raise KeyError(f"{LLM_ARGS} defines no {ROOT_CLASS} with fields")
    for config_class in NESTED.values():
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


def load_registry() -> dict:
    return json.loads(REGISTRY.read_text()) if REGISTRY.exists() else {"releases": {}}


def chart_lines(registry: dict, shared: dict, shared_name: str) -> list[str]:
    """The generated template: every list once, and the release -> list table."""
    lists = {"shared": shared["fields"]}
    releases, header = {}, []
    for release in RELEASES + sorted(set(registry["releases"]) - set(RELEASES)):
        entry = registry["releases"].get(release)
        if entry:
            lists[release] = entry["fields"]
            src = entry["source"]
            releases[release] = (release, f"{src['wheel']} (sha256 {src['sha256']}), {src['member']}")
        else:
            releases[release] = ("shared", f"no list read from its wheel yet: the shared {shared_name}")
        header.append(f"  {release}: {releases[release][1]}")
    lines = [
        "{{/*",
        "TensorRT-LLM engine keys per release: TorchLlmArgs fields (with its bases') and the keys of the nested",
        "configs the chart validates. Generated by python -m ci.gptoss_ci.sync_trtllm_fields; do not edit. Source of each list:",
        *header,
        f"  shared: {shared_name}: {shared['source'].split('. ')[0]}",
        'Usage: {{ $lists := include "gpt-oss.trtllmFieldLists" . | fromYaml }}',
        "*/}}",
        '{{- define "gpt-oss.trtllmFieldLists" -}}',
        "releases:",
    ]
    for release, (list_name, source) in releases.items():
        lines += [f"  {json.dumps(release)}:", f"    list: {list_name}", f"    source: {json.dumps(source)}"]
    lines.append("lists:")
    for name, fields in lists.items():
        lines += [f"  {name}:", "    top:", *[f"      - {f}" for f in fields["LlmArgs"]], "    nested:"]
        for key, config_class in NESTED.items():
            lines.append(f"      {key}:")
            lines.extend(f"        - {f}" for f in fields[config_class])
    lines.append("{{- end }}")
    return lines


def write_chart(shared_path: Path) -> str:
    shared = json.loads(shared_path.read_text())
    registry = load_registry()
    TARGET.write_text("\n".join(chart_lines(registry, shared, "trtllm/llmargs-fields.json")) + "\n")
    own = sorted(set(registry["releases"]) & set(RELEASES))
    return (f"wrote {TARGET.relative_to(REPO)}: lists read from wheels: {', '.join(own) or 'none'}; "
            f"the shared list for {', '.join(r for r in RELEASES if r not in own) or 'none'}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shared", nargs="?", default=str(REPO.parent / "shared" / "trtllm" / "llmargs-fields.json"))
    parser.add_argument("--release", help="read this TensorRT-LLM release's wheel")
    parser.add_argument("--wheel", help="a local wheel or a URL serving ranges, instead of PyPI's")
    parser.add_argument("--find", help="print member:line of each source line with this text, and stop")
    parser.add_argument("--under", default="tensorrt_llm/", help="with --find: members under this path")
    args = parser.parse_args(argv)
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
        fields = read_fields(wheel.text)
        registry = load_registry()
        registry["releases"][args.release] = {"source": dict(source, member=LLM_ARGS), "fields": fields}
        registry["releases"] = dict(sorted(registry["releases"].items()))
        REGISTRY.write_text(json.dumps(registry, indent=1) + "\n")
        print(f"{args.release}: {len(fields['LlmArgs'])} TorchLlmArgs fields from {source['wheel']}")
    print(write_chart(Path(args.shared)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
