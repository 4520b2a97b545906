"""Build, from Debian packages and PyPI only, every container image the node tests run; never pull one.

    python -m ci.cluster node-images build  [--cache DIR] [--image NAME ...]   build what the cache lacks, timing each build
    python -m ci.cluster node-images list   [--cache DIR]                      JSON: each image's key, archive, names, state
    python -m ci.cluster node-images import [--cache DIR] --address SOCKET     import every built archive into a containerd
                                                                (namespace k8s.io), tagged with the rendered names

Each image is a one-layer OCI archive (oci-layout, index.json, manifest, config, one uncompressed layer) that
`ctr images import` reads, then tagged with the exact names the chart renders (read from a render, so a new
image tag in values.yaml is followed). An archive is cached under the hash of everything it is made from
(Debian mirror and suite, package names and candidate versions, pip requirement lines, the files copied in,
the image config and this script's recipe version), so a CI run rebuilds only what changed. The cache lives
outside the checkout: $GPT_OSS_NODE_IMAGES, default ~/.cache/gpt-oss/node-images.

The images, and what each stands in for (tests say so where they use them):
  pause    catatonit -P from Debian's catatonit: the sandbox (pause) image containerd starts for every pod.
  python   debootstrap --variant=minbase bookworm + python3 + pip, then the pip packages of the chart's Jobs:
           the download image's pinned requirements (images/model-fetch/requirements.txt) and aiperf from
           requirements-e2e.txt (the benchmark). Stands in for the model-fetch image (the download Job and the
           check-model init containers; built from
           images/model-fetch/Containerfile on python:3.12.8-slim-bookworm) and for
           docker.io/library/python:3.12.8-slim-bookworm (the smoke test): Debian's Python is 3.11.
  serving  the same base + ai-dynamo from requirements-e2e.txt (Dynamo frontend and mocker) + the stand-in
           script ci/cluster/stand_in.py, also installed as `trtllm-serve`. Stands in for the TensorRT-LLM
           release image (trtllm-serve: a Dynamo frontend on the rendered port in front of a mocker serving the
           checkpoint folder's name).
  dynamo-runtime  the same base + ai-dynamo 1.6.1 (requirements-e2e-dynamo-1.6.txt, installed --no-deps as
           ci/dynamo-venv.sh does: the file is the whole resolved set) + the stand-in script, with
           ci/cluster/stand_in_python3.sh as /usr/local/bin/python3. Stands in for the Dynamo runtime image
           (tensorrtllm-runtime) in the pods the Dynamo operator makes: `python3 -m dynamo.frontend` is the real
           1.6.1 frontend, `python3 -m dynamo.trtllm` the GPU-free mocker, both answering the operator's probes.
           Named as the chart renders the 1.6 line at 1.6.1 (dynamo_stand_in_values), which the node tests install:
           the default 1.7 line's 1.7.0 has no stand-in (no 1.7 final is installable here, and the operator built
           here, 1.5.0-dev, supports runtimes up to 1.6).
  dynamo-operator  no stand-in: the Dynamo operator's own binaries, built here from the shared source archives (the
           Go part dynamo-operator, ci/cluster/dynamo_operator.py), laid out as its upstream Dockerfile lays out
           nvcr.io/nvidia/ai-dynamo/kubernetes-operator: /manager, /crd-apply, the CRDs in /opt/dynamo-operator/crds,
           user 65532. Tagged <appVersion>-dev.<commit>; the node tests install it with the platform chart.
Where each image's pip packages come from is its `pip` list: "FILE" (every requirement of a requirements file),
or "FILE:name,..." (only those projects).

Needs root, debootstrap, apt-get, tar, unshare and chroot (util-linux), and helm-python-sdk for the render.
Prints one line per image: cached, or built in N s (size).
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import REPO, dynamo_operator, go_parts

RECIPE_VERSION = 1  # bump when the recipe below changes what an image contains
SUITE = "bookworm"
# The pause (sandbox) image the node's containerd runs (its config's sandbox_image); built here as `pause`.
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
PYTHON_APT = ["python3", "python3-pip", "ca-certificates"]


@dataclass
class Image:
    name: str
    roles: list[str]  # rendered images it is tagged as (see rendered_images)
    stand_in: str
    debs: list[str] = field(default_factory=list)  # extracted as they are (no package manager in the image)
    apt: list[str] = field(default_factory=list)  # a debootstrapped minbase root with these packages
    pip: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # path in the image -> repo file
    links: dict[str, str] = field(default_factory=dict)  # path in the image -> symlink target
    config: dict = field(default_factory=dict)  # OCI image config (Entrypoint, Cmd, Env, WorkingDir)
    busybox_links: bool = False  # a busybox-static image: link its applets (bin/sh, ...); part of every image's key
    pip_no_deps: bool = False  # the pip list is a whole resolved set: install it as it is (pip --no-deps)
    part: str = ""  # a Go part (python -m ci.cluster go-parts) whose build provides part_files
    part_files: dict[str, str] = field(default_factory=dict)  # path in the image -> file or folder in the part


# The ai-dynamo set the Dynamo runtime stand-in carries (its ai-dynamo pin is the runtime it stands in for), and the
# release line whose shape runs that runtime.
DYNAMO_STAND_IN_REQUIREMENTS = "requirements-e2e-dynamo-1.6.txt"
DYNAMO_STAND_IN_LINE = "1.6"

IMAGES = [
    Image("pause", ["pause"], "the pause (sandbox) image: Debian's catatonit in pause mode",
          debs=["catatonit"], config={"Entrypoint": ["/usr/bin/catatonit", "-P"]}),
    Image("python", ["download", "check-model", "smoke-test"],
          "the model-fetch and docker.io/library/python images: Debian bookworm's python3 (3.11) with the Jobs' "
          "pinned pip packages", apt=PYTHON_APT, pip=["images/model-fetch/requirements.txt", "requirements-e2e.txt:aiperf"],
          config={"Cmd": ["python3"]}),
    Image("serving", ["trtllm-serve"],
          "the TensorRT-LLM release image (trtllm-serve): ai-dynamo 1.2.1's frontend and GPU-free mocker on Debian's "
          "python3", apt=PYTHON_APT, pip=["requirements-e2e.txt:ai-dynamo"],
          files={"/usr/local/bin/gpt-oss-stand-in": "ci/cluster/stand_in.py"},
          links={"/usr/local/bin/trtllm-serve": "gpt-oss-stand-in"}, config={"Cmd": ["python3"]}),
    Image("dynamo-runtime", ["dynamo-runtime"],
          "the Dynamo runtime image (tensorrtllm-runtime): ai-dynamo 1.6.1's real frontend, and its GPU-free mocker "
          "for `python3 -m dynamo.trtllm`, on Debian's python3", apt=PYTHON_APT,
          pip=[DYNAMO_STAND_IN_REQUIREMENTS], pip_no_deps=True,
          files={"/usr/local/bin/gpt-oss-stand-in": "ci/cluster/stand_in.py",
                 "/usr/local/bin/python3": "ci/cluster/stand_in_python3.sh"}, config={"Cmd": ["python3"]}),
    Image("dynamo-operator", ["dynamo-operator"],
          "the Dynamo operator itself (1.5.0-dev), built here from the shared source archives",
          part=dynamo_operator.PART, part_files={"/manager": "bin/manager", "/crd-apply": "bin/crd-apply",
                                                 "/opt/dynamo-operator/crds": "crds"},
          config={"Entrypoint": ["/manager"], "User": "65532:65532"}),
]
BASE_ENV = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"]


def cache_dir(value: str | None = None) -> Path:
    return Path(value or os.environ.get("GPT_OSS_NODE_IMAGES") or Path.home() / ".cache" / "gpt-oss" / "node-images")


# --- what the chart renders ------------------------------------------------------------------


def dynamo_stand_in_values() -> dict:
    """The values that render the Dynamo runtime the stand-in carries: its release line, and its ai-dynamo pin as
    dynamo.image.tag (the node tests install Dynamo targets with them)."""
    pins = (REPO / DYNAMO_STAND_IN_REQUIREMENTS).read_text().splitlines()
    version = next(line.split("==", 1)[1].strip() for line in pins if line.startswith("ai-dynamo=="))
    return {"dynamo": {"releaseLine": DYNAMO_STAND_IN_LINE, "image": {"tag": version}}}


def rendered_images() -> dict[str, str]:
    """role -> the image reference the chart renders for it (default values of one target per runtime; the Dynamo
    target with dynamo_stand_in_values, as the node tests install it)."""
    from tools.gptoss.objects import dgd_components, find
    from tools.gptoss.render import parse_manifests, render_manifests
    from tools.gptoss.values import overlay_runtime, overlays
    serve, dynamo = (parse_manifests(render_manifests([next(o for o in overlays() if overlay_runtime(o) == runtime)],
                                                      values))
                     for runtime, values in (("trtllm-serve", None), ("dynamo", dynamo_stand_in_values())))
    job = next(o for o in serve if o["kind"] == "Job" and "model-download" in o["metadata"]["name"])
    deployment = find(serve, "Deployment")["spec"]["template"]["spec"]
    smoke = next(o for o in serve if o["kind"] == "Pod" and o["metadata"]["name"].endswith("smoke-test"))
    frontend = dgd_components(find(dynamo, "DynamoGraphDeployment"))["Frontend"]["main"]
    return {
        "pause": PAUSE_IMAGE,
        "download": job["spec"]["template"]["spec"]["containers"][0]["image"],
        "smoke-test": smoke["spec"]["containers"][0]["image"],
        "check-model": next(c["image"] for c in deployment["initContainers"] if c["name"] == "check-model"),
        "trtllm-serve": next(c["image"] for c in deployment["containers"] if c["name"] == "trtllm-serve"),
        "dynamo-runtime": frontend["image"],
        "dynamo-operator": operator_image(),
    }


def operator_image() -> str:
    """The name the node tests install the Dynamo operator's image under (a placeholder without its archives)."""
    try:
        return dynamo_operator.image()
    except dynamo_operator.SourceMissing:
        return f"{dynamo_operator.IMAGE_REPOSITORY}:no-source"


def part_key(image: Image) -> str:
    """The cache key of the Go part an image copies files from ("" when its source is missing)."""
    try:
        return go_parts.key(image.part)
    except dynamo_operator.SourceMissing:
        return ""


def part_missing(image: Image) -> str | None:
    """Why an image's Go part cannot be copied from, or None."""
    if image.part and go_parts.built(image.part) is None:
        return f"the Go part {image.part} is not built (python -m ci.cluster go-parts build {image.part})"
    return None


def image_names(image: Image, rendered: dict[str, str]) -> list[str]:
    return sorted({rendered[role] for role in image.roles})


# --- inputs and keys ---------------------------------------------------------------------------


def debian_mirror() -> str:
    """The Debian mirror apt uses here (GPT_OSS_DEBIAN_MIRROR overrides)."""
    if os.environ.get("GPT_OSS_DEBIAN_MIRROR"):
        return os.environ["GPT_OSS_DEBIAN_MIRROR"]
    texts = [p.read_text() for p in sorted(Path("/etc/apt/sources.list.d").glob("*.sources"))]
    for text in texts:
        for stanza in text.split("\n\n"):
            fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", stanza, re.M))
            if SUITE in fields.get("Suites", "").split() and fields.get("URIs"):
                return fields["URIs"].split()[0]
    lists = Path("/etc/apt/sources.list")
    if lists.exists():
        for line in lists.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "deb" and parts[2] == SUITE:
                return parts[1]
    return "http://deb.debian.org/debian"


def pip_requirements(image: Image, rendered: dict[str, str]) -> list[str]:
    """The requirement lines of an image, from its pip sources."""
    lines = []
    for source in image.pip:
        path, _, only = source.partition(":")
        wanted = {re.sub(r"[-_.]+", "-", n).lower() for n in only.split(",") if n}
        for line in (REPO / path).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            project = re.sub(r"[-_.]+", "-", re.split(r"[<>=!~\[; ]", line, 1)[0]).lower()
            if not wanted or project in wanted:
                lines.append(line)
        missing = wanted - {re.sub(r"[-_.]+", "-", re.split(r"[<>=!~\[; ]", line, 1)[0]).lower() for line in lines}
        if missing:
            raise SystemExit(f"{image.name}: {path} pins none of {sorted(missing)}")
    return lines


def candidate_versions(packages: list[str]) -> dict[str, str]:
    """Debian's candidate version of each package (apt-cache policy), so a Debian update is a new key."""
    versions = {}
    for package in packages:
        try:
            output = subprocess.run(["apt-cache", "policy", package], capture_output=True, text=True).stdout
        except FileNotFoundError:  # not a Debian host: nothing can be built here anyway
            output = ""
        match = re.search(r"Candidate:\s*(\S+)", output)
        versions[package] = match.group(1) if match and match.group(1) != "(none)" else "unknown"
    return versions


def base_inputs(image: Image) -> dict:
    return {"recipe": RECIPE_VERSION, "suite": SUITE, "mirror": debian_mirror(), "apt": sorted(image.apt)}


def inputs(image: Image, rendered: dict[str, str]) -> dict:
    return {
        "recipe": RECIPE_VERSION, "name": image.name,
        "debs": candidate_versions(image.debs) if image.debs else {},
        "base": base_inputs(image) if image.apt else None,
        "pip": pip_requirements(image, rendered), **({"pip_no_deps": True} if image.pip_no_deps else {}),
        "files": {dest: hashlib.sha256((REPO / src).read_bytes()).hexdigest() for dest, src in image.files.items()},
        "links": image.links, "config": image.config, "busybox_links": image.busybox_links,
        **({"part": {"name": image.part, "key": part_key(image), "files": image.part_files}} if image.part else {}),
    }


def key_of(data: dict) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class Planned:
    image: Image
    key: str
    archive: Path
    names: list[str]
    record: Path

    @property
    def built(self) -> bool:
        return self.archive.is_file() and self.record.is_file()

    @property
    def content_ref(self) -> str:
        return f"gpt-oss.test/node-images/{self.image.name}:{self.key}"


def plan(cache: Path, rendered: dict[str, str] | None = None) -> list[Planned]:
    rendered = rendered or rendered_images()
    planned = []
    for image in IMAGES:
        key = key_of(inputs(image, rendered))
        archive = cache / f"{image.name}-{key}.oci.tar"
        planned.append(Planned(image, key, archive, image_names(image, rendered), archive.with_suffix(".json")))
    return planned


# --- building ----------------------------------------------------------------------------------


def run(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, argv[:6]))} ... failed ({result.returncode}):\n"
                         + (result.stdout + result.stderr)[-3000:])
    return result


def download_debs(packages: list[str], into: Path) -> list[Path]:
    """apt-get download (as apt is set up here); one apt-get update first when the lists lack a package."""
    for attempt in range(2):
        result = subprocess.run(["apt-get", "download", *packages], cwd=into, capture_output=True, text=True)
        if result.returncode == 0:
            return sorted(into.glob("*.deb"))
        if attempt == 0:
            run(["apt-get", "update", "-qq"])
    raise SystemExit(f"apt-get download {' '.join(packages)} failed:\n{result.stderr[-2000:]}")


def extract_debs(image: Image, root: Path, work: Path) -> None:
    debs = work / "debs"
    debs.mkdir()
    for deb in download_debs(image.debs, debs):
        run(["dpkg-deb", "-x", str(deb), str(root)])
    for folder in ("tmp", "dev", "proc", "sys", "etc"):
        (root / folder).mkdir(exist_ok=True)
    (root / "tmp").chmod(0o1777)
    if image.busybox_links:
        busybox = root / "bin" / "busybox"
        applets = run([str(busybox), "--list-full"]).stdout.split()
        for applet in applets:  # e.g. bin/sh, usr/bin/env
            link = root / applet
            if not link.exists():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to("/bin/busybox")


def base_rootfs(image: Image, cache: Path) -> Path:
    """A tar of `debootstrap --variant=minbase` with the image's apt packages, built once per key."""
    key = key_of(base_inputs(image))
    tar = cache / f"base-{SUITE}-{key}.tar"
    if tar.is_file():
        return tar
    started = time.monotonic()
    with tempfile.TemporaryDirectory(dir=cache, prefix="base-") as tmp:
        root = Path(tmp) / "root"
        (cache / "debs").mkdir(exist_ok=True)
        run(["debootstrap", "--variant=minbase", f"--include={','.join(image.apt)}",
             f"--cache-dir={cache / 'debs'}", SUITE, str(root), debian_mirror()])
        run(["tar", "--create", "--file", f"{tar}.part", "--numeric-owner", "-C", str(root), "."])
    os.replace(f"{tar}.part", tar)
    print(f"  base {tar.name}: debootstrap minbase {SUITE} + {', '.join(image.apt)} in "
          f"{time.monotonic() - started:.0f}s", flush=True)
    return tar


def chroot(root: Path, script: str, binds: dict[Path, str] | None = None) -> None:
    """Run a shell script in the root, in a private mount namespace (its mounts vanish with it)."""
    mounts = [f"mount -t proc proc {root}/proc"]
    for source, target in (binds or {}).items():
        make = f"touch {root}{target}" if Path(source).is_file() else f"mkdir -p {root}{target}"
        mounts += [make, f"mount --bind {source} {root}{target}"]
    env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8",
           "PIP_DEFAULT_TIMEOUT=180", "PIP_DISABLE_PIP_VERSION_CHECK=1"]
    outer = " && ".join(mounts) + f" && chroot {root} /usr/bin/env -i {' '.join(env)} /bin/sh -ec \"$0\""
    run(["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-ec", outer, script])


def python_rootfs(image: Image, root: Path, cache: Path, rendered: dict[str, str]) -> None:
    """The base root with the image's pip packages, from a tar cached under the hash of base and requirements
    (so changing a file copied into the image costs no new pip install)."""
    requirements = pip_requirements(image, rendered)
    no_deps = {"no_deps": True} if image.pip_no_deps else {}
    stage = cache / f"stage-{image.name}-{key_of({'base': base_inputs(image), 'pip': requirements, **no_deps})}.tar"
    if stage.is_file():
        run(["tar", "--extract", "--file", str(stage), "--numeric-owner", "-C", str(root)])
        return
    started = time.monotonic()
    run(["tar", "--extract", "--file", str(base_rootfs(image, cache)), "--numeric-owner", "-C", str(root)])
    if requirements:
        (root / "tmp" / "requirements.txt").write_text("\n".join(requirements) + "\n")
        shutil.copy("/etc/resolv.conf", root / "etc" / "resolv.conf")
        (cache / "pip").mkdir(exist_ok=True)
        binds = {cache / "pip": "/root/.cache/pip"}
        # The host's CA bundle for pip's TLS (a proxy's CA may sit in it); bound in, never copied into the image.
        host_ca = Path(os.environ.get("PIP_CERT") or "/etc/ssl/certs/ca-certificates.crt")
        cert = ""
        if host_ca.is_file():
            binds[host_ca] = "/tmp/host-ca.crt"
            cert = "--cert /tmp/host-ca.crt "
        no_deps = "--no-deps " if image.pip_no_deps else ""
        chroot(root, f"python3 -m pip install --quiet --break-system-packages --root-user-action=ignore {cert}"
                     f"{no_deps}-r /tmp/requirements.txt", binds=binds)
        (root / "tmp" / "host-ca.crt").unlink(missing_ok=True)
        (root / "tmp" / "requirements.txt").unlink()
        (root / "etc" / "resolv.conf").unlink()
    # Like the image it stands in for: pip installs for the user without Debian's PEP 668 guard.
    for marker in (root / "usr" / "lib").glob("python3*/EXTERNALLY-MANAGED"):
        marker.unlink()
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "root/.cache"):
        shutil.rmtree(root / junk, ignore_errors=True)
        (root / junk).mkdir(parents=True, exist_ok=True)
    run(["tar", "--create", "--file", f"{stage}.part", "--numeric-owner", "-C", str(root), "."])
    os.replace(f"{stage}.part", stage)
    for older in cache.glob(f"stage-{image.name}-*.tar"):
        if older != stage:
            older.unlink()
    print(f"  {stage.name}: pip install {' '.join(requirements)} in {time.monotonic() - started:.0f}s", flush=True)


def write_archive(planned: Planned, root: Path, work: Path) -> int:
    """The one-layer OCI archive of `root`; returns the layer's size."""
    layer = work / "layer.tar"
    excludes = [f"--exclude=./{d}/*" for d in ("dev", "proc", "sys", "run", "tmp")]
    run(["tar", "--create", "--file", str(layer), "--numeric-owner", "--sort=name", *excludes, "-C", str(root), "."])
    digest = hashlib.sha256()
    with open(layer, "rb") as source:
        for block in iter(lambda: source.read(1 << 22), b""):
            digest.update(block)
    layer_digest, layer_size = f"sha256:{digest.hexdigest()}", layer.stat().st_size
    config = {"architecture": "amd64", "os": "linux",
              "config": {"Env": BASE_ENV + planned.image.config.get("Env", []),
                         **{k: v for k, v in planned.image.config.items() if k != "Env"}},
              "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
              "history": [{"created_by": f"python -m ci.cluster node-images {planned.image.name} (key {planned.key})"}]}
    config_bytes = json.dumps(config, sort_keys=True).encode()
    config_digest = f"sha256:{hashlib.sha256(config_bytes).hexdigest()}"
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest,
                           "size": len(config_bytes)},
                "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer_digest,
                            "size": layer_size}]}
    manifest_bytes = json.dumps(manifest, sort_keys=True).encode()
    manifest_digest = f"sha256:{hashlib.sha256(manifest_bytes).hexdigest()}"
    index = {"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest_digest,
        "size": len(manifest_bytes), "platform": {"architecture": "amd64", "os": "linux"},
        "annotations": {"io.containerd.image.name": planned.content_ref,
                        "org.opencontainers.image.ref.name": planned.key}}]}
    part = planned.archive.with_name(planned.archive.name + ".part")
    with tarfile.open(part, "w", format=tarfile.PAX_FORMAT) as archive:
        def add_bytes(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            archive.addfile(info, io.BytesIO(data))
        add_bytes("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add_bytes("index.json", json.dumps(index).encode())
        add_bytes(f"blobs/sha256/{config_digest[7:]}", config_bytes)
        add_bytes(f"blobs/sha256/{manifest_digest[7:]}", manifest_bytes)
        archive.add(str(layer), arcname=f"blobs/sha256/{layer_digest[7:]}")
    os.replace(part, planned.archive)
    layer.unlink()
    return layer_size


def build_one(planned: Planned, cache: Path, rendered: dict[str, str]) -> dict:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(dir=cache, prefix=f"{planned.image.name}-") as tmp:
        work = Path(tmp)
        root = work / "root"
        root.mkdir()
        if planned.image.apt:
            python_rootfs(planned.image, root, cache, rendered)
        elif planned.image.debs:
            extract_debs(planned.image, root, work)
        else:
            for folder in ("tmp", "dev", "proc", "sys", "etc"):
                (root / folder).mkdir()
            (root / "tmp").chmod(0o1777)
        for dest, src in planned.image.part_files.items():
            source, target = go_parts.bin_dir(planned.image.part).parent / src, root / dest.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target)
            else:
                shutil.copy(source, target)
                target.chmod(0o755)
        for dest, src in planned.image.files.items():
            target = root / dest.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / src, target)
            target.chmod(0o755)
        for dest, link in planned.image.links.items():
            target = root / dest.lstrip("/")
            target.unlink(missing_ok=True)
            target.symlink_to(link)
        size = write_archive(planned, root, work)
    record = {"image": planned.image.name, "key": planned.key, "names": planned.names,
              "stand_in_for": planned.image.stand_in, "seconds": round(time.monotonic() - started, 1),
              "layer_bytes": size, "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "inputs": inputs(planned.image, rendered)}
    planned.record.write_text(json.dumps(record, indent=1))
    return record


def why_not_buildable() -> str | None:
    if os.geteuid() != 0:
        return "building the node images needs root (debootstrap, chroot)"
    for tool in ("debootstrap", "apt-get", "dpkg-deb", "tar", "unshare", "chroot"):
        if not shutil.which(tool):
            return f"no {tool} on PATH (.ci/run installs the node tier's Debian packages)"
    return None


def build(cache: Path, only: list[str] | None = None) -> int:
    reason = why_not_buildable()
    if reason:
        print(f"node images not built: {reason}")
        return 3
    cache.mkdir(parents=True, exist_ok=True)
    rendered = rendered_images()
    failed = 0
    for planned in plan(cache, rendered):
        if only and planned.image.name not in only:
            continue
        missing = part_missing(planned.image)
        if missing and not planned.built:
            print(f"{planned.image.name}: NOT built: {missing}", flush=True)
            failed = 1
            continue
        if planned.built:
            print(f"{planned.image.name}: cached ({planned.archive.name}) as {', '.join(planned.names)}", flush=True)
            continue
        print(f"{planned.image.name}: building {planned.archive.name} ...", flush=True)
        record = build_one(planned, cache, rendered)
        print(f"{planned.image.name}: built in {record['seconds']:.0f}s, layer {record['layer_bytes'] / 2**20:.0f} MiB, "
              f"as {', '.join(planned.names)}", flush=True)
        for stale in cache.glob(f"{planned.image.name}-*.oci.tar"):
            if stale != planned.archive:  # an older key of the same image: never used again
                stale.unlink()
                stale.with_suffix(".json").unlink(missing_ok=True)
    return failed


def import_images(cache: Path, address: str, namespace: str = "k8s.io") -> list[str]:
    """Import each built archive the containerd lacks (its content name carries the key), tag it with its
    rendered names, and drop every other image; returns what is missing (unbuilt)."""
    ctr = ["ctr", "--address", address, "--namespace", namespace]
    present = set(run([*ctr, "images", "ls", "-q"]).stdout.split())
    missing, current = [], set()
    for planned in plan(cache):
        if not planned.built:
            missing.append(planned.image.name)
            continue
        current.add(planned.content_ref)
        if planned.content_ref not in present:
            started = time.monotonic()
            run([*ctr, "images", "import", str(planned.archive)])
            print(f"  imported {planned.image.name} in {time.monotonic() - started:.0f}s", flush=True)
        for name in planned.names:
            run([*ctr, "images", "tag", "--force", planned.content_ref, name])
            current.add(name)
    stale = stale_refs(run([*ctr, "images", "ls"]).stdout, current)
    if stale:
        # --sync: the blobs and unpacked layers are gone before the tests start, not at some later collection
        run([*ctr, "images", "rm", "--sync", *stale])
    return missing


def stale_refs(listing: str, current: set[str]) -> list[str]:
    """The refs in `ctr images ls` output that no current image needs. The root is this node's alone, so that is
    every ref but the current names and the image IDs CRI gave their manifests (`sha256:<config>`, which
    pin an older import's GiB layer forever once its names have moved on), and the tags older charts rendered."""
    rows = [line.split() for line in listing.splitlines()[1:] if line.strip()]
    digests = {row[2] for row in rows if row[0] in current}
    return sorted(row[0] for row in rows if row[0] not in current
                  and not (row[0].startswith("sha256:") and row[2] in digests))


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["build", "list", "import"])
    parser.add_argument("--cache", help="cache folder (default $GPT_OSS_NODE_IMAGES or ~/.cache/gpt-oss/node-images)")
    parser.add_argument("--image", action="append", help="build: only this image (repeatable)")
    parser.add_argument("--address", help="import: containerd's socket")
    args = parser.parse_args(argv)
    cache = cache_dir(args.cache)
    if args.command == "build":
        return build(cache, args.image)
    if args.command == "list":
        print(json.dumps([{"image": p.image.name, "key": p.key, "archive": str(p.archive), "names": p.names,
                           "built": p.built, "stand_in_for": p.image.stand_in,
                           **({"seconds": json.loads(p.record.read_text())["seconds"]} if p.built else {})}
                          for p in plan(cache)], indent=1))
        return 0
    if not args.address:
        parser.error("import needs --address")
    missing = import_images(cache, args.address)
    if missing:
        print(f"not built (run python -m ci.cluster node-images build): {', '.join(missing)}")
        return 1
    return 0
