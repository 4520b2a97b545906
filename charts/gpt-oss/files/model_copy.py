"""Copies of a model revision and their manifests; the S3 and OCI clients that fetch them.

A copy is a folder: on the model-cache PVC, under an S3 prefix, or the root of an OCI image. It holds the
files of one revision (minus the ignore patterns), optionally tiktoken/o200k_base.tiktoken, and
model-manifest.json: the model id, the revision and every file's path, size and sha256. The manifest's own
sha256 is what the values pin (modelCache.manifestSha256), the way model.revision pins the Hub's commit.
tools/mirror-model.py writes copies with this module; the chart's download Job and check-model init container read
them with it. Standard library only; boto3 is imported when S3 is used.
"""
from __future__ import annotations

import base64
import errno
import fnmatch
import hashlib
import json
import os
import posixpath
import re
import stat
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

MANIFEST = "model-manifest.json"
FORMAT = "gpt-oss.model-copy/v1"
TIKTOKEN_PATH = "tiktoken/o200k_base.tiktoken"
# Where partial downloads and pulled blobs wait, inside the copy's folder but never part of it.
WORK_DIR = ".cache/gpt-oss"
BLOCK = 8 * 1024 * 1024
# Where checked files wait until every listed file is checked; then they move into place together.
STAGING_DIR = WORK_DIR + "/staging"
# Limits on what is read into memory: a hostile server cannot make the Job read without end.
MAX_MANIFEST = 16 * 1024 * 1024  # model-manifest.json (a few KiB for a model of a few hundred files)
MAX_LISTING = 16 * 1024 * 1024  # the Hub's JSON listing of a revision
MAX_OCI_MANIFEST = 4 * 1024 * 1024  # what the OCI distribution spec lets a registry refuse above
MAX_TOKEN_ANSWER = 1024 * 1024  # a registry token service's JSON answer

MEDIA_INDEX = "application/vnd.oci.image.index.v1+json"
MEDIA_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MEDIA_CONFIG = "application/vnd.oci.image.config.v1+json"
MEDIA_LAYER = "application/vnd.oci.image.layer.v1.tar"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
ACCEPT = ", ".join([MEDIA_INDEX, MEDIA_MANIFEST, DOCKER_LIST, DOCKER_MANIFEST])


class CopyError(Exception):
    """The copy cannot be used; the message says which file, key or value and what to do."""


def read_limited(stream, limit: int, what: str) -> bytes:
    """At most `limit` bytes of a stream; more is refused, never read into memory."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise CopyError(f"{what} is larger than {limit} bytes; refused (a source that never ends is not read)")
    return data


# --- paths: no symbolic link is ever followed --------------------------------------------------------------------

# A model id as the chart takes it (values.schema.yaml, model.id): <org>/<name>, each a plain folder name, never . or ..
MODEL_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,95}/[A-Za-z0-9_-][A-Za-z0-9._-]{0,95}")


def model_folder(cache: str | os.PathLike, model: str, model_dir: str | os.PathLike | None = None) -> Path:
    """The model's folder in the cache, <cache>/<org>/<name>: refused unless `model` is <org>/<name> of plain folder
    names, `model_dir` (when given) names that very folder, and neither <org> nor <name> is a symbolic link. What a Job
    writes and removes stays in its own model's folder, even on a claim other releases share (defence in depth: the
    chart's schema refuses such a model.id first)."""
    if not MODEL_ID.fullmatch(model):
        raise CopyError(f"MODEL_ID={model!r} is not <org>/<name> of plain folder names (letters, digits, . _ -, not "
                        "starting with a dot): the model's folder would not be a folder of its own in the cache")
    root = Path(cache)
    if not root.is_absolute():
        raise CopyError(f"CACHE_DIR={str(cache)!r} is not an absolute path: the cache's mount point is needed")
    folder = root / model
    if model_dir is not None and Path(os.path.normpath(model_dir)) != folder:
        raise CopyError(f"MODEL_DIR={model_dir} is not the folder of {model} in the cache {root} ({folder}): the Job "
                        "writes and removes files in its own model's folder only")
    for part in (root / model.split("/")[0], folder):
        info = _lstat(part)
        if info is not None and stat.S_ISLNK(info.st_mode):
            raise CopyError(f"{part} is a symbolic link: the model's folder must be a folder of the cache {root}, and "
                            "no link is followed")
    return folder


def _lstat(path):
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def safe_folders(root: str | os.PathLike, relative_parent: str, create: bool = False) -> Path | None:
    """root/relative_parent, each folder on the way checked with lstat (and made when `create`); a symbolic link or
    a file on the way is refused. None when a folder is missing and not made."""
    current = Path(root)
    found = _lstat(current)
    if found is None and create:
        current.mkdir(parents=True, exist_ok=True)
        found = _lstat(current)
    if found is None:
        return None
    if not stat.S_ISDIR(found.st_mode):
        raise CopyError(f"{current} is a symbolic link or not a folder; refused (a copy is never reached through links)")
    for part in [p for p in relative_parent.split("/") if p]:
        current = current / part
        found = _lstat(current)
        if found is None:
            if not create:
                return None
            os.mkdir(current)
            continue
        if not stat.S_ISDIR(found.st_mode):
            raise CopyError(f"{current} is a symbolic link or not a folder; refused (a copy is never reached "
                            "through links)")
    return current


def open_no_follow(path: str | os.PathLike, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
    """os.open with O_NOFOLLOW: a symbolic link at `path` is refused, not followed; only regular files open."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError as error:
        found = _lstat(path)
        if error.errno == errno.ELOOP or (found is not None and stat.S_ISLNK(found.st_mode)):
            raise CopyError(f"{path} is a symbolic link; refused (a copy holds regular files only)") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise CopyError(f"{path} is not a regular file; refused")
    return fd


def write_file_atomically(path: str | os.PathLike, data: bytes) -> None:
    """`data` at `path` by a uniquely named temporary file beside it, fsynced, then renamed over it."""
    path = Path(path)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix="." + path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    fsync_folder(path.parent)


def fsync_folder(folder: str | os.PathLike) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_small_file(path: str | os.PathLike, limit: int, what: str) -> bytes:
    """A small file's bytes (no link followed, at most `limit` bytes)."""
    fd = open_no_follow(path)
    with os.fdopen(fd, "rb") as source:
        return read_limited(source, limit, what)


# --- manifests -----------------------------------------------------------------------------------------------

def not_part_of_a_copy(relative: str) -> bool:
    """The manifest itself, huggingface_hub's and this module's bookkeeping, and ready markers."""
    name = posixpath.basename(relative)
    return (relative == MANIFEST or relative.startswith(".cache/") or name.startswith(".download-complete-")
            or name.endswith((".partial", ".tmp")))


def sha256_file(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with os.fdopen(open_no_follow(path), "rb") as source:
        for block in iter(lambda: source.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def manifest_bytes(model: str, revision: str, files: list[dict]) -> bytes:
    """The manifest in its one serialization (sorted keys and paths), so the same files give the same sha256."""
    entries = sorted(({"path": f["path"], "size": int(f["size"]), "sha256": f["sha256"]} for f in files),
                     key=lambda f: f["path"])
    return (json.dumps({"format": FORMAT, "model": model, "revision": revision, "files": entries},
                       indent=1, sort_keys=True) + "\n").encode()


def walk_files(folder: str | os.PathLike):
    """(relative path, lstat) of everything in `folder` but its folders, links included, never followed; the
    work folder (.cache/) is not walked."""
    root = Path(folder)
    for current, folders, files in os.walk(root, followlinks=False):
        base = Path(current).relative_to(root).as_posix()
        base = "" if base == "." else base + "/"
        for name in list(folders):
            if os.path.islink(os.path.join(current, name)):
                folders.remove(name)
                yield base + name, os.lstat(os.path.join(current, name))
            elif base == "" and name == ".cache":
                folders.remove(name)
        for name in files:
            yield base + name, os.lstat(os.path.join(current, name))


def folder_files(folder: str | os.PathLike, ignore_patterns=()) -> list[str]:
    """Relative paths of the files that make the copy in `folder`, sorted; a link (to a file or a folder) or any
    other thing that is not a regular file is refused."""
    found = []
    for relative, info in walk_files(folder):
        if not_part_of_a_copy(relative):
            continue
        if any(fnmatch.fnmatch(relative, pattern) for pattern in ignore_patterns):
            continue
        if not stat.S_ISREG(info.st_mode):
            raise CopyError(f"{Path(folder) / relative} is a symbolic link or not a regular file: a copy holds "
                            "regular files only")
        found.append(relative)
    return sorted(found)


def folder_manifest(folder, model: str, revision: str, ignore_patterns=(), log=print) -> bytes:
    """The manifest of the files in `folder` (hashing each)."""
    files = []
    for relative in folder_files(folder, ignore_patterns):
        path = Path(folder) / relative
        files.append({"path": relative, "size": path.stat().st_size, "sha256": sha256_file(path)})
        log(f"  {relative}: {files[-1]['size']} bytes, sha256 {files[-1]['sha256']}")
    return manifest_bytes(model, revision, files)


def safe_relative(path: str) -> bool:
    return (bool(path) and not path.startswith("/") and "\\" not in path
            and posixpath.normpath(path) == path and not path.startswith("../") and path != ".."
            and not not_part_of_a_copy(path))


def read_manifest(data: bytes, where: str, model: str, revision: str, pinned_sha256: str = "") -> dict:
    """The manifest at `where`, refused unless it is this model's pinned revision (and the pinned manifest).
    The pin is checked first: a manifest of another sha256 is never parsed."""
    if len(data) > MAX_MANIFEST:
        raise CopyError(f"{where} is larger than {MAX_MANIFEST} bytes; refused")
    digest = hashlib.sha256(data).hexdigest()
    if pinned_sha256 and digest != pinned_sha256:
        raise CopyError(f"{where} has sha256 {digest}, but modelCache.manifestSha256 pins {pinned_sha256}: this "
                        "is not the copy the values pin; pin the sha256 tools/mirror-model.py printed for it")
    try:
        manifest = json.loads(data)
        files = manifest["files"]
        listed = {f["path"]: f for f in files}
        assert manifest["format"] == FORMAT and len(listed) == len(files)
        assert all(isinstance(f["size"], int) and re.fullmatch(r"[0-9a-f]{64}", f["sha256"]) for f in files)
    except (ValueError, KeyError, TypeError, AssertionError):
        raise CopyError(f"{where} is not a {FORMAT} manifest: write copies with tools/mirror-model.py") from None
    unsafe = [path for path in listed if not safe_relative(path)]
    if unsafe:
        raise CopyError(f"{where} lists paths outside the copy or reserved: {unsafe}; refused")
    if (manifest["model"], manifest["revision"]) != (model, revision):
        raise CopyError(f"{where} is a copy of {manifest['model']}@{manifest['revision']}, but model.id and "
                        f"model.revision ask for {model}@{revision}: a copy of another revision is never served; "
                        "mirror the pinned revision (tools/mirror-model.py), or point the values at its copy")
    manifest["sha256"] = digest
    return manifest


class _Digests:
    """sha256 of a file's bytes, and its git blob sha1 when the entry lists one (the Hub's id of a non-LFS file)."""

    def __init__(self, entry: dict):
        self.sha256 = hashlib.sha256()
        self.sha1 = hashlib.sha1(b"blob %d\0" % entry["size"]) if entry.get("blob_sha1") else None

    def update(self, block: bytes) -> None:
        self.sha256.update(block)
        if self.sha1 is not None:
            self.sha1.update(block)

    def read_fd(self, fd: int) -> int:
        """Hash what the open file holds, from its start; returns its size."""
        size = 0
        os.lseek(fd, 0, os.SEEK_SET)
        for block in iter(lambda: os.read(fd, BLOCK), b""):
            self.update(block)
            size += len(block)
        return size


def _mismatch(size: int, digests: _Digests, entry: dict) -> str | None:
    """What differs between the bytes seen and the entry (size, sha256, git blob sha1), or None."""
    lister = entry.get("listed_by", "the manifest")
    if size != entry["size"]:
        return f"{size} bytes, {lister} lists {entry['size']}"
    if entry.get("sha256") and digests.sha256.hexdigest() != entry["sha256"]:
        return f"sha256 differs: {digests.sha256.hexdigest()}, {lister} lists {entry['sha256']}"
    if digests.sha1 is not None and digests.sha1.hexdigest() != entry["blob_sha1"]:
        return f"git blob sha1 differs: {digests.sha1.hexdigest()}, {lister} lists {entry['blob_sha1']}"
    return None


def check_file(path: str | os.PathLike, entry: dict, root: str | os.PathLike | None = None) -> str | None:
    """What is wrong with one file of a copy, or None; an entry without sha256 gets the file's. With `root`, every
    folder between root and the file is checked too: a link on the way is a problem, never followed."""
    path = Path(path)
    if root is not None:
        try:
            if safe_folders(root, path.parent.relative_to(root).as_posix()) is None:
                return "missing"
        except CopyError:
            return "reached through a symbolic link (a folder on its way is a link); refused"
    info = _lstat(path)
    if info is None:
        return "missing"
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link; refused (a copy holds regular files only)"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_size != entry["size"]:
        return f"{info.st_size} bytes, {entry.get('listed_by', 'the manifest')} lists {entry['size']}"
    digests = _Digests(entry)
    fd = open_no_follow(path)
    try:
        size = digests.read_fd(fd)
    finally:
        os.close(fd)
    problem = _mismatch(size, digests, entry)
    if problem is None:
        entry.setdefault("sha256", digests.sha256.hexdigest())
    return problem


def folder_problems(folder, manifest: dict, only: list[str] | None = None, unlisted: bool = True) -> dict[str, str]:
    """{path: problem} for every listed file (or those of `only`) that differs from the manifest, and (checking the
    whole copy, with `unlisted`) every file the manifest does not list, which is never served."""
    listed = {f["path"]: f for f in manifest["files"]}
    wanted = only if only is not None else sorted(listed)
    problems = {}
    for relative in wanted:
        if relative not in listed:
            problems[relative] = "not in the manifest"
            continue
        problem = check_file(Path(folder) / relative, listed[relative], root=folder)
        if problem:
            problems[relative] = problem
    if only is None and unlisted:
        for relative, info in walk_files(folder):
            if relative in listed or not_part_of_a_copy(relative):
                continue
            problems[relative] = ("a symbolic link; refused" if stat.S_ISLNK(info.st_mode)
                                  else "not in the manifest; a copy holds only the files its manifest lists")
    return problems


def verify_folder(folder, manifest: dict, only: list[str] | None = None, log=print, unlisted: bool = True) -> list[str]:
    """'path: problem' for every listed file (or those of `only`) that differs from the manifest, and every file it
    does not list (see folder_problems)."""
    return [f"{path}: {problem}" for path, problem in sorted(folder_problems(folder, manifest, only, unlisted).items())]


# --- fetching one file with resume ---------------------------------------------------------------------------

def partial_path(folder, relative: str) -> Path:
    return Path(folder) / WORK_DIR / "partial" / (relative + ".partial")


def remove_entry(folder, relative: str) -> None:
    """Remove one file (or link: the link itself, never what it points at) of a copy; a folder there is refused."""
    path = Path(folder) / relative
    info = _lstat(path)
    if info is None:
        return
    if stat.S_ISDIR(info.st_mode):
        raise CopyError(f"{path} is a folder where the manifest lists a file; refused (remove it)")
    path.unlink()


def _write_all(fd: int, block: bytes) -> None:
    view = memoryview(block)
    while view:
        view = view[os.write(fd, view):]


def fetch_file(folder, entry: dict, open_stream, log=print, partial: Path | None = None,
               into: str | os.PathLike | None = None) -> str | None:
    """Put one listed file in place, resuming a partial download; returns a problem, or None when it matches.

    open_stream(offset) returns (readable, total size of the object or None). The bytes go to a partial file
    beside the copy, hashed as they arrive through the one file descriptor that is renamed (a resumed run hashes
    what is already there first, through it too); never more than the listed size is written. The file moves to
    `into` (a staging folder; default: into place in `folder`) only when size and hash match the entry (sha256,
    or the git blob sha1 the Hub lists for a non-LFS file; the entry then gets the sha256). A file already in
    place (or staged by an earlier run) is checked, and fetched again if it differs. Links are never followed.
    partial: where the partial file goes (default: under WORK_DIR in `folder`).
    """
    relative, size = entry["path"], entry["size"]
    lister = entry.get("listed_by", "the manifest")
    target = Path(folder) / relative
    if _lstat(target) is not None:
        problem = check_file(target, entry, root=folder)
        if problem is None:
            if into is not None:  # a file staged by an earlier run must not replace it
                remove_entry(into, relative)
            log(f"  {relative}: in place, checked")
            return None
        log(f"  {relative}: in place but {problem}; fetching it again")
        if "through a symbolic link" in problem:
            raise CopyError(f"{target}: {problem}")
        if into is None:  # staged, it replaces the file only when every file is checked
            remove_entry(folder, relative)
    destination_root = Path(into) if into is not None else Path(folder)
    if into is not None and _lstat(destination_root / relative) is not None:
        problem = check_file(destination_root / relative, entry, root=destination_root)
        if problem is None:
            log(f"  {relative}: staged, checked")
            return None
        remove_entry(destination_root, relative)
    partial = Path(partial or partial_path(folder, relative))
    try:
        safe_folders(folder, partial.parent.relative_to(folder).as_posix(), create=True)
    except ValueError:  # a partial file outside the copy's folder (a caller's choice)
        partial.parent.mkdir(parents=True, exist_ok=True)
    fd = open_no_follow(partial, os.O_RDWR | os.O_CREAT)
    try:
        digests = _Digests(entry)
        offset = digests.read_fd(fd)
        if offset > size:
            os.ftruncate(fd, 0)
            digests, offset = _Digests(entry), 0
        if offset:
            log(f"  {relative}: resuming at {offset} of {size} bytes")
        if offset < size or size == 0:
            stream, total = open_stream(offset)
            if total is not None and total != size:
                stream.close()
                os.close(fd)
                fd = -1
                partial.unlink(missing_ok=True)
                return f"the source holds {total} bytes, {lister} lists {size}"
            with stream:
                os.lseek(fd, offset, os.SEEK_SET)
                remaining = size - offset
                while remaining > 0:
                    block = stream.read(min(BLOCK, remaining))
                    if not block:
                        break
                    _write_all(fd, block)
                    digests.update(block)
                    remaining -= len(block)
                overflow = remaining == 0 and bool(stream.read(1))
            if overflow:
                os.close(fd)
                fd = -1
                partial.unlink(missing_ok=True)
                return f"the source sent more than the {size} bytes {lister} lists; refused, nothing past it written"
        written = os.fstat(fd).st_size
        problem = _mismatch(written, digests, entry)
        if problem:
            os.close(fd)
            fd = -1
            partial.unlink(missing_ok=True)
            return problem
        os.fsync(fd)
        mine = os.fstat(fd)
        entry.setdefault("sha256", digests.sha256.hexdigest())
        safe_folders(destination_root, posixpath.dirname(relative), create=True)
        destination = destination_root / relative
        there = _lstat(partial)
        if there is None or (there.st_dev, there.st_ino) != (mine.st_dev, mine.st_ino):
            raise CopyError(f"{partial} was replaced while {relative} was fetched (another writer on the cache?); "
                            "refused")
        os.replace(partial, destination)
        there = _lstat(destination)
        if there is None or (there.st_dev, there.st_ino) != (mine.st_dev, mine.st_ino):
            raise CopyError(f"{destination} is not the file that was checked (another writer on the cache?); refused")
    finally:
        if fd >= 0:
            os.close(fd)
    log(f"  {relative}: {size} bytes, checked")
    return None


# --- the Hugging Face Hub (or a mirror of it) ------------------------------------------------------------------

def hub_request(url: str, token: str | None = None, offset: int = 0, timeout: float = 120):
    """An opened response; redirects (to the Hub's CDN) drop the token. A token never goes over plain HTTP."""
    headers = {"User-Agent": "gpt-oss-model-fetch"}
    if token:
        if urllib.parse.urlsplit(url).scheme != "https":
            raise CopyError(f"{url} is plain HTTP: the Hugging Face token (huggingface.tokenSecret) is never sent "
                            "over it; use an https:// endpoint")
        headers["Authorization"] = f"Bearer {token}"
    if offset:
        headers["Range"] = f"bytes={offset}-"
    return urllib.request.build_opener(_SameHostRedirect()).open(urllib.request.Request(url, headers=headers),
                                                                  timeout=timeout)


def hub_entries(endpoint: str, model: str, revision: str, ignore_patterns=(), token: str | None = None) -> list[dict]:
    """The revision's files minus ignore_patterns (huggingface_hub's fnmatch rules), with the Hub's sizes and
    hashes: sha256 for LFS files, git blob sha1 for the others."""
    url = f"{endpoint.rstrip('/')}/api/models/{model}/revision/{urllib.parse.quote(revision, safe='')}?blobs=true"
    try:
        with hub_request(url, token) as response:
            info = json.loads(read_limited(response, MAX_LISTING, f"the listing of {model}@{revision} at {endpoint}"))
    except urllib.error.HTTPError as error:
        if error.code in (401, 403):
            raise CopyError(f"{endpoint} refused {model} ({error.code}): check the token of huggingface.tokenSecret") \
                from None
        raise CopyError(f"{endpoint} has no {model}@{revision} ({error.code}): check model.id, model.revision and "
                        "modelCache.huggingface.endpoint") from None
    except urllib.error.URLError as error:
        raise CopyError(f"cannot reach {endpoint} ({error.reason}): check modelCache.huggingface.endpoint, "
                        "modelCache.proxy and modelCache.caBundle") from None
    if info.get("sha") != revision:
        raise CopyError(f"{endpoint} answered commit {info.get('sha')} for {model}@{revision}; refused (a listing "
                        "must name the pinned commit)")
    patterns = [p + "*" if p.endswith("/") else p for p in ignore_patterns]
    entries = []
    for sibling in info.get("siblings", []):
        name = sibling["rfilename"]
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns):
            continue
        if not safe_relative(name):
            raise CopyError(f"{endpoint} lists {name!r} in {model}@{revision}, a path outside the copy; refused")
        lfs = sibling.get("lfs")
        try:
            entry = {"path": name, "size": int(lfs["size"] if lfs else sibling["size"]), "listed_by": "the Hub"}
        except (KeyError, TypeError, ValueError):
            entry = {"size": -1}
        digest = (lfs or {}).get("sha256") if lfs else sibling.get("blobId")
        if entry["size"] < 0 or not re.fullmatch(r"[0-9a-f]{64}" if lfs else r"[0-9a-f]{40}", str(digest or "")):
            raise CopyError(f"{endpoint} lists {name!r} in {model}@{revision} without a size and a hash (sha256 for "
                            "LFS files, a git blob sha1 otherwise); refused: every file is checked against a hash")
        entry["sha256" if lfs else "blob_sha1"] = digest
        entries.append(entry)
    return sorted(entries, key=lambda e: e["path"])


def hub_opener(endpoint: str, model: str, revision: str, entry: dict, token: str | None = None):
    """open_stream for fetch_file: the file at the pinned revision, from `offset` on."""
    url = (f"{endpoint.rstrip('/')}/{model}/resolve/{urllib.parse.quote(revision, safe='')}/"
           f"{urllib.parse.quote(entry['path'])}")

    def open_stream(offset: int):
        try:
            response = hub_request(url, token, offset)
        except urllib.error.HTTPError as error:
            raise CopyError(f"{url} answered {error.code}: {error.read(300).decode(errors='replace')}") from None
        if offset and response.status != 206:
            response.close()
            raise CopyError(f"{url} ignored the Range request: cannot resume {entry['path']}")
        length = response.headers.get("Content-Length")
        return response, (offset + int(length)) if length is not None else None
    return open_stream


# --- S3 ------------------------------------------------------------------------------------------------------

def s3_key(prefix: str, relative: str) -> str:
    prefix = prefix.strip("/")
    return f"{prefix}/{relative}" if prefix else relative


def s3_client(endpoint: str = "", region: str = "", path_style: bool = False, credentials_dir: str = ""):
    """A boto3 S3 client; keys from files in credentials_dir, else boto3's chain (workload identity, env)."""
    import boto3
    from botocore.config import Config

    keys = {}
    if credentials_dir:
        for name, argument in (("access-key-id", "aws_access_key_id"), ("secret-access-key", "aws_secret_access_key"),
                               ("session-token", "aws_session_token")):
            path = Path(credentials_dir) / name
            if path.is_file() and path.read_text().strip():
                keys[argument] = path.read_text().strip()
    config = Config(s3={"addressing_style": "path" if path_style else "virtual"},
                    retries={"max_attempts": 5, "mode": "standard"}, connect_timeout=30, read_timeout=120)
    return boto3.client("s3", endpoint_url=endpoint or None, region_name=region or None, config=config, **keys)


def s3_error(error: Exception, bucket: str, key: str, endpoint: str) -> CopyError:
    """A CopyError naming the values behind an S3 failure."""
    where = f"s3://{bucket}/{key} at {endpoint or 'the AWS endpoint of the region'}"
    response = getattr(error, "response", None) or {}
    code = str(response.get("Error", {}).get("Code", type(error).__name__))
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "AccessDenied",
                "403", "AllAccessDisabled") or status == 403:
        return CopyError(f"S3 refused the credentials for {where} ({code}): check the keys of the Secret "
                         "modelCache.s3.credentialsSecret names (or the identity of modelCache.s3.serviceAccount) "
                         "and that it may read the bucket")
    if code in ("NoSuchBucket",):
        return CopyError(f"no bucket {bucket!r} at {endpoint or 'the AWS endpoint'} ({code}): check modelCache.s3.bucket"
                         " and modelCache.s3.endpoint")
    if code in ("NoSuchKey", "404", "NotFound") or status == 404:
        return CopyError(f"nothing at {where} ({code}): check modelCache.s3.prefix, the folder tools/mirror-model.py "
                         f"wrote (it holds {MANIFEST})")
    if type(error).__name__ in ("NoCredentialsError", "PartialCredentialsError"):
        return CopyError(f"no S3 credentials for {where}: set modelCache.s3.credentialsSecret.name, or give the Job "
                         "a workload identity with modelCache.s3.serviceAccount")
    return CopyError(f"S3 failed for {where}: {code}: {error}")


# --- OCI registries ------------------------------------------------------------------------------------------

def split_reference(reference: str) -> tuple[str, str, str]:
    """host[:port]/repository[:tag|@digest] -> (host, repository, tag or digest or "")."""
    reference = reference.removeprefix("oci://")
    host, _, rest = reference.partition("/")
    if not rest or ("." not in host and ":" not in host and host != "localhost"):
        raise CopyError(f"{reference!r} is not <registry host>/<repository>[:tag]: name the registry, "
                        "e.g. registry.example.com/models/gpt-oss-120b")
    if "@" in rest:
        repository, _, tag = rest.partition("@")
    elif ":" in rest.rsplit("/", 1)[-1]:
        repository, tag = rest.rsplit(":", 1)
    else:
        repository, tag = rest, ""
    return host, repository, tag


def docker_credentials(host: str, config_files=()) -> tuple[str, str] | None:
    """(user, password) for `host` from Docker config files (.dockerconfigjson of imagePullSecrets)."""
    for config_file in config_files:
        try:
            auths = json.loads(Path(config_file).read_text()).get("auths", {})
        except (OSError, ValueError):
            continue
        for name, entry in auths.items():
            if urllib.parse.urlsplit(name if "://" in name else "//" + name).netloc != host:
                continue
            if entry.get("auth"):
                user, _, password = base64.b64decode(entry["auth"]).decode().partition(":")
                return user, password
            if entry.get("username"):
                return entry["username"], entry.get("password", "")
    return None


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL, the port made explicit: what a credential is bound to."""
    parts = urllib.parse.urlsplit(url)
    port = parts.port or {"https": 443, "http": 80}.get(parts.scheme, 0)
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


class _SameHostRedirect(urllib.request.HTTPRedirectHandler):
    """Follow redirects (blobs often live in object storage) without carrying the Authorization header to
    another origin: it is dropped whenever the scheme, host or port changes, and over plain HTTP."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and (origin(newurl) != origin(req.full_url) or origin(newurl)[0] != "https"):
            for name in ("Authorization", "authorization"):
                new.headers.pop(name, None)
                new.unredirected_hdrs.pop(name, None)
        return new


CREDENTIALS_HINT = ("give the registry's credentials (the chart: dynamo.imagePullSecrets with a .dockerconfigjson "
                    "for this host; tools/mirror-model.py: --username and REGISTRY_PASSWORD, or a Docker config)")


class Registry:
    """The parts of the OCI distribution API a copy needs: manifests, blobs (ranged), uploads; basic and token auth."""

    def __init__(self, host: str, plain_http: bool = False, credentials: tuple[str, str] | None = None,
                 timeout: float = 120, token_service: str = ""):
        self.host, self.credentials, self.timeout = host, credentials, timeout
        self.token_service = token_service
        self.base = f"{'http' if plain_http else 'https'}://{host}"
        self.opener = urllib.request.build_opener(_SameHostRedirect())
        self.authorization: str | None = None

    def _token(self, challenge: str) -> str:
        scheme, _, params = challenge.partition(" ")
        if scheme.lower() == "basic":
            if not self.credentials:
                raise CopyError(f"{self.host} wants a user and password and none were given: {CREDENTIALS_HINT}")
            self._no_plain_http(self.base)
            return "Basic " + base64.b64encode(":".join(self.credentials).encode()).decode()
        fields = dict(re.findall(r'(\w+)="([^"]*)"', params))
        realm = fields.get("realm", "")
        if self.credentials:
            # The registry names its token service: credentials go there only when it is on the registry's own
            # origin, or is the one the user named (modelCache.oci.tokenService); never over plain HTTP.
            if origin(realm) != origin(self.base) and not (self.token_service
                                                            and origin(realm) == origin(self.token_service)):
                raise CopyError(f"{self.host} sends its token requests to {realm!r}, not on the registry's host; "
                                "refused, no credential goes there: if that token service is the registry's, name it "
                                "in modelCache.oci.tokenService")
            self._no_plain_http(realm)
        query = urllib.parse.urlencode({k: v for k, v in fields.items() if k in ("service", "scope")})
        request = urllib.request.Request(f"{realm}?{query}")
        if self.credentials:
            request.add_header("Authorization",
                               "Basic " + base64.b64encode(":".join(self.credentials).encode()).decode())
        try:
            with self.opener.open(request, timeout=self.timeout) as response:
                answer = json.loads(read_limited(response, MAX_TOKEN_ANSWER, f"the token service of {self.host}"))
        except urllib.error.HTTPError as error:
            raise CopyError(f"the token service of {self.host} refused ({error.code}): {CREDENTIALS_HINT}") from None
        return "Bearer " + (answer.get("token") or answer["access_token"])

    def _no_plain_http(self, url: str) -> None:
        if origin(url)[0] != "https":
            raise CopyError(f"{url} is plain HTTP: no credential goes over it; serve the registry (and its token "
                            "service) over https, with modelCache.caBundle for a private CA")

    def request(self, method: str, path: str, headers: dict | None = None, data=None, what: str = ""):
        """The response (the caller closes it); HTTPError for other statuses than 2xx, after one auth retry."""
        url = path if path.startswith("http") else self.base + path
        for attempt in (1, 2):
            request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
            if self.authorization and origin(url) == origin(self.base):  # never to another origin
                request.add_header("Authorization", self.authorization)
            try:
                return self.opener.open(request, timeout=self.timeout)
            except urllib.error.HTTPError as error:
                challenge = error.headers.get("WWW-Authenticate", "")
                if error.code == 401 and attempt == 1 and challenge:
                    self.authorization = self._token(challenge)
                    if hasattr(data, "seek"):
                        data.seek(0)
                    continue
                body = error.read(4096).decode(errors="replace")
                if error.code in (401, 403):
                    raise CopyError(f"{self.host} refused {what or path} ({error.code}): {CREDENTIALS_HINT}") \
                        from None
                raise CopyError(f"{self.host}: {method} {what or path} answered {error.code}: {body.strip()[:300]}") \
                    from None
            except urllib.error.URLError as error:
                raise CopyError(f"cannot reach the registry {self.base}: {error.reason}") from None
        raise AssertionError("unreachable")

    def manifest(self, repository: str, reference: str) -> tuple[bytes, str]:
        """(bytes, media type) of a manifest or index; by digest, the bytes are checked against it."""
        try:
            with self.request("GET", f"/v2/{repository}/manifests/{reference}", {"Accept": ACCEPT},
                              what=f"{repository}@{reference}") as response:
                data = read_limited(response, MAX_OCI_MANIFEST, f"the manifest {repository}@{reference}")
                media = response.headers.get("Content-Type", "").split(";")[0]
        except CopyError as error:
            if " answered 404" in str(error):
                raise CopyError(f"no image {self.host}/{repository}@{reference} in the registry (manifest unknown): "
                                "check modelCache.oci.repository and modelCache.oci.digest, the digest "
                                "tools/mirror-model.py printed") from None
            raise
        if reference.startswith("sha256:") and "sha256:" + hashlib.sha256(data).hexdigest() != reference:
            raise CopyError(f"{self.host}/{repository}@{reference} answered a manifest with another digest; refused")
        return data, media or json.loads(data).get("mediaType", "")

    def blob_size(self, repository: str, digest: str) -> int | None:
        try:
            with self.request("HEAD", f"/v2/{repository}/blobs/{digest}") as response:
                return int(response.headers.get("Content-Length", "0"))
        except CopyError:
            return None

    def open_blob(self, repository: str, digest: str, offset: int = 0):
        headers = {"Range": f"bytes={offset}-"} if offset else {}
        response = self.request("GET", f"/v2/{repository}/blobs/{digest}", headers, what=f"blob {digest}")
        if offset and response.status != 206:
            response.close()
            raise CopyError(f"{self.host} ignored the Range of blob {digest}: cannot resume it")
        return response

    def push_blob(self, repository: str, path: str | os.PathLike, digest: str, size: int) -> bool:
        """Upload a blob unless the registry has it; True when uploaded."""
        if self.blob_size(repository, digest) == size:
            return False
        with self.request("POST", f"/v2/{repository}/blobs/uploads/", {"Content-Length": "0"}, data=b"") as answer:
            location = urllib.parse.urljoin(self.base + "/", answer.headers["Location"])
        separator = "&" if "?" in location else "?"
        with open(path, "rb") as body:
            with self.request("PUT", f"{location}{separator}digest={urllib.parse.quote(digest)}",
                              {"Content-Type": "application/octet-stream", "Content-Length": str(size)},
                              data=body, what=f"blob {digest}"):
                pass
        return True

    def push_manifest(self, repository: str, reference: str, data: bytes, media_type: str) -> str:
        with self.request("PUT", f"/v2/{repository}/manifests/{reference}",
                          {"Content-Type": media_type, "Content-Length": str(len(data))}, data=data,
                          what=f"manifest {repository}:{reference}"):
            pass
        return "sha256:" + hashlib.sha256(data).hexdigest()


def extract_layer(blob: str | os.PathLike, folder: str | os.PathLike) -> list[str]:
    """Unpack one image layer (tar, optionally gzip) into `folder`; regular files and folders only."""
    written = []
    try:
        with tarfile.open(blob, "r:*") as layer:
            for member in layer:
                name = member.name
                while name.startswith("./"):
                    name = name[2:]
                name = posixpath.normpath(name or ".")
                if member.isdir() or name == ".":
                    continue
                if (not member.isfile() or not (name == MANIFEST or safe_relative(name))
                        or posixpath.basename(name).startswith(".wh.")):
                    raise CopyError(f"layer {Path(blob).name} holds {member.name!r}, which is not a regular file inside "
                                    "the copy; refused (write model images with tools/mirror-model.py)")
                parent = safe_folders(folder, posixpath.dirname(name), create=True)
                target = Path(folder) / name
                if _lstat(target) is not None and not stat.S_ISREG(_lstat(target).st_mode):
                    raise CopyError(f"{target} is a symbolic link or not a regular file; refused")
                fd, temporary = tempfile.mkstemp(dir=parent, prefix="." + target.name + ".", suffix=".tmp")
                try:
                    with layer.extractfile(member) as source, os.fdopen(fd, "wb") as out:
                        for block in iter(lambda: source.read(BLOCK), b""):
                            out.write(block)
                    os.replace(temporary, target)
                except BaseException:
                    Path(temporary).unlink(missing_ok=True)
                    raise
                written.append(name)
    except tarfile.TarError as error:
        raise CopyError(f"layer {Path(blob).name} is not a tar archive this Job reads (tar or tar+gzip): {error}") \
            from None
    return written
