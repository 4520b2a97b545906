#!/usr/bin/env python3
"""The node tier's serving stand-in (ci/node-images.py puts it in the `serving` image): Dynamo's own frontend in
front of GPU-free `dynamo.mocker` engines, on this image's Debian python3 with ai-dynamo from requirements-e2e.txt.

    trtllm-serve MODEL_DIR [--host H] [--port P] [other trtllm-serve flags]
        What the chart's trtllm-serve Deployment runs: answers as trtllm-serve would, on --port, with the
        checkpoint folder's name as the model (/health, /v1/models, /v1/chat/completions), from one mocker
        that reads MODEL_DIR's config and tokenizer. The GPU flags are read and ignored.
    gpt-oss-stand-in serve --model-path DIR --model-name NAME [--mocker 'ARGS'] ... -- FRONTEND ARGV ...
        Mockers (one per --mocker: extra mocker arguments, e.g. '--disaggregation-mode prefill'), then the
        given frontend command (the one a DynamoGraphDeployment renders) with file discovery added.
Every process gets file discovery under $TMPDIR (or /tmp), loopback-only Dynamo networking and HF_HUB_OFFLINE=1;
the frontend finds the model card's files in a Hugging Face cache entry made from DIR under $HOME. Exits when any
process exits (with its code), so the kubelet restarts the container; SIGTERM stops them all.
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

MOCKER = [sys.executable, "-m", "dynamo.mocker"]
FRONTEND = [sys.executable, "-m", "dynamo.frontend"]
CARD_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
              "special_tokens_map.json", "chat_template.jinja")
TRTLLM_SERVE_SWITCHES = {"--trust_remote_code"}


def environment() -> dict[str, str]:
    tmp = os.environ.get("TMPDIR") or "/tmp"
    home = os.environ.get("HOME") if os.access(os.environ.get("HOME", "/"), os.W_OK) else tmp
    env = dict(os.environ, HOME=home, DYN_FILE_KV=os.path.join(tmp, "dynamo-discovery"), HF_HUB_OFFLINE="1",
               DYN_TCP_RPC_HOST="127.0.0.1", DYN_TCP_RESPONSE_STREAM_HOST="lo", DYN_SDK_DISABLE_ANSI_LOGGING="1",
               NO_COLOR="1", DYN_HTTP_GRACEFUL_SHUTDOWN_TIMEOUT_SECS="1")
    os.makedirs(env["DYN_FILE_KV"], exist_ok=True)
    return env


def hf_cache(model_dir: str, name: str, home: str) -> None:
    """The model card names its files hf://NAME/...: a cache entry for NAME, offline, from the checkpoint folder."""
    entry = Path(home) / ".cache" / "huggingface" / "hub" / ("models--" + name.replace("/", "--"))
    snapshot = entry / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True, exist_ok=True)
    for file in CARD_FILES:
        if (Path(model_dir) / file).is_file():
            shutil.copy(Path(model_dir) / file, snapshot / file)
    (entry / "refs").mkdir(exist_ok=True)
    (entry / "refs" / "main").write_text("0" * 40)


def supervise(commands: list[tuple[str, list[str]]], env: dict[str, str]) -> int:
    processes = []

    def stop(signum=None, _frame=None):
        for _, process in processes:
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + 5
        for _, process in processes:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
        if signum is not None:
            sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for name, argv in commands:
        print(f"stand-in: starting {name}: {shlex.join(argv)}", flush=True)
        processes.append((name, subprocess.Popen(argv, env=env)))
    while True:
        for name, process in processes:
            if process.poll() is not None:
                print(f"stand-in: {name} exited with {process.returncode}; stopping the rest", flush=True)
                stop()
                return process.returncode or 1
        time.sleep(0.5)


def serve(model_path: str, model_name: str, mockers: list[list[str]], frontend: list[str]) -> int:
    env = environment()
    hf_cache(model_path, model_name, env["HOME"])
    commands = []
    for index, extra in enumerate(mockers or [[]]):
        # A --mocker that names its model (the e2e tier's translation of a worker) is taken as it is.
        model = [] if "--model-path" in extra else ["--model-path", model_path, "--model-name", model_name]
        flags = [] if "--discovery-backend" in extra else ["--discovery-backend", "file", "--speedup-ratio", "0"]
        commands.append((f"mocker-{index}", [*MOCKER, *model, *extra, *flags]))
    commands.append(("frontend", [*frontend, "--discovery-backend", "file"]))
    return supervise(commands, env)


def parse_trtllm_serve(args: list[str]) -> dict:
    """{model_path, model_name, host, port, ignored} of `trtllm-serve MODEL_DIR --flag value ...`; the model is
    listed under the folder's name, as trtllm-serve does for a local checkpoint."""
    if not args or args[0].startswith("-"):
        raise ValueError(f"usage: trtllm-serve MODEL_DIR [--host H] [--port P] ...; got {args}")
    model_path, rest, options = args[0], list(args[1:]), {"--host": "0.0.0.0", "--port": "8000"}
    while rest:
        flag = rest.pop(0)
        if flag in TRTLLM_SERVE_SWITCHES:
            continue
        if not flag.startswith("--") or not rest or rest[0].startswith("--"):
            raise ValueError(f"cannot read {flag!r} in {args}: a flag without a value that is not a known switch")
        options[flag] = rest.pop(0)
    return {"model_path": model_path, "model_name": Path(model_path).name, "host": options.pop("--host"),
            "port": int(options.pop("--port")), "ignored": options}


def trtllm_serve(args: list[str]) -> int:
    try:
        server = parse_trtllm_serve(args)
    except ValueError as error:
        sys.exit(f"trtllm-serve stand-in: {error}")
    print(f"stand-in for trtllm-serve: serving {server['model_name']} from {server['model_path']} on "
          f"{server['host']}:{server['port']}; GPU settings read and ignored: {server['ignored']}", flush=True)
    frontend = [*FRONTEND, "--http-host", server["host"], "--http-port", str(server["port"])]
    return serve(server["model_path"], server["model_name"], [], frontend)


def main() -> int:
    if Path(sys.argv[0]).name == "trtllm-serve":
        return trtllm_serve(sys.argv[1:])
    if len(sys.argv) > 1 and sys.argv[1] == "trtllm-serve":
        return trtllm_serve(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["serve"])
    parser.add_argument("--model-path", required=True)
    parser.add_argument("--model-name", required=True)
    parser.add_argument("--mocker", action="append", default=[], help="extra arguments of one mocker")
    argv = sys.argv[1:]
    if "--" not in argv:
        parser.error("give the frontend's command after --")
    split = argv.index("--")
    args, frontend = parser.parse_args(argv[:split]), argv[split + 1:]
    if not frontend:
        parser.error("give the frontend's command after --")
    if frontend[0] in ("python3", "python"):
        frontend[0] = sys.executable
    return serve(args.model_path, args.model_name, [shlex.split(m) for m in args.mocker], frontend)


if __name__ == "__main__":
    sys.exit(main())
