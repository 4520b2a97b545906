#!/usr/bin/env python3
"""The node tier's serving stand-in (ci/node-images.py puts it in the `serving` image): Dynamo's own frontend in
front of GPU-free `dynamo.mocker` engines, on this image's Debian python3 with ai-dynamo from requirements-e2e.txt.

    trtllm-serve MODEL_DIR [--host H] [--port P] [other trtllm-serve flags]
        What the chart's trtllm-serve Deployment runs: answers as trtllm-serve would, on --port, with the
        checkpoint folder's name as the model (/health, /v1/models, /v1/chat/completions), from one mocker
        that reads MODEL_DIR's config and tokenizer. The GPU flags are read and ignored. The port is served by an
        HTTP server in this process that passes every request to the Dynamo frontend on 127.0.0.1 and shuts down as
        trtllm-serve's uvicorn server does (tensorrt_llm/serve/openai_server.py: uvicorn.Config with no
        timeout_graceful_shutdown): on SIGTERM it closes its listener, answers what it already accepted with
        `Connection: close`, waits for every open request however long it takes, then stops the rest and exits 0.
        When the --extra_llm_api_options YAML sets return_perf_metrics and enable_iter_perf_stats (what makes
        trtllm-serve mount it), GET /prometheus/metrics answers with trtllm-serve's gauges under their names
        (tensorrt_llm/metrics/collector.py; ../shared/trtllm/RELEASES-FACTS.md section 2), from this server's own
        requests: EngineGauges says how. The mocker schedules at most --max_batch_size sequences (else the YAML's
        max_batch_size, else TensorRT-LLM's 2048) in blocks of kv_cache_config.tokens_per_block (else 32).
    gpt-oss-stand-in serve --model-path DIR --model-name NAME [--mocker 'ARGS'] ... -- FRONTEND ARGV ...
        Mockers (one per --mocker: extra mocker arguments, e.g. '--disaggregation-mode prefill'), then the
        given frontend command (the one a DynamoGraphDeployment renders) with file discovery added. On SIGTERM the
        frontend alone is signalled and drains with its own graceful shutdown (DYN_HTTP_GRACEFUL_SHUTDOWN_TIMEOUT_SECS,
        as the pod sets it); the mockers, standing in for worker pods that a frontend's shutdown leaves running, are
        stopped only after it exits.
    python3 -m dynamo.trtllm ARGS      (the runtime image's python3 routes it here: stand_in_python3.sh)
        In a worker pod the Dynamo operator made: `dynamo.mocker` instead of the TensorRT-LLM engine, with the rendered
        model path, served name and disaggregation mode (translate_worker_args), on the discovery backend the
        operator's env names (DYN_DISCOVERY_BACKEND) and its system port (DYN_SYSTEM_*), whose /live and /health
        answer the operator's probes. The process is exec'd: SIGTERM reaches the mocker itself.
    python3 -m dynamo.frontend ARGS
        In the operator's frontend pod: the real frontend (exec'd), after a Hugging Face cache entry under a writable
        HOME for every checkpoint folder on the model-cache mount (GPT_OSS_STAND_IN_MODEL_ROOT, default /model-cache),
        since the model card a worker publishes names its files hf://<model id>/... and nothing here reaches the Hub.
The serve and trtllm-serve modes give every process file discovery under $TMPDIR (or /tmp), loopback-only Dynamo
networking and HF_HUB_OFFLINE=1;
the frontend finds the model card's files in a Hugging Face cache entry made from DIR under $HOME. The mockers answer
instantly unless GPT_OSS_STAND_IN_SPEEDUP_RATIO sets their --speedup-ratio (the node tests slow them so requests are
in flight when a pod goes). Exits when any process exits (with its code), so the kubelet restarts the container.
"""
from __future__ import annotations

import argparse
import asyncio
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
               NO_COLOR="1")
    # The frontend's own drain as the pod sets it (the chart renders it on the Dynamo frontend); else Dynamo's default.
    env.setdefault("DYN_HTTP_GRACEFUL_SHUTDOWN_TIMEOUT_SECS", "5")
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


def start(commands: list[tuple[str, list[str]]], env: dict[str, str]) -> list[tuple[str, subprocess.Popen]]:
    processes = []
    for name, argv in commands:
        print(f"stand-in: starting {name}: {shlex.join(argv)}", flush=True)
        processes.append((name, subprocess.Popen(argv, env=env)))
    return processes


def stop_all(processes: list[tuple[str, subprocess.Popen]], seconds: float = 5) -> None:
    for _, process in processes:
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + seconds
    for _, process in processes:
        try:
            process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()


def exited(processes: list[tuple[str, subprocess.Popen]]) -> tuple[str, int] | None:
    for name, process in processes:
        if process.poll() is not None:
            return name, process.returncode
    return None


def supervise(commands: list[tuple[str, list[str]]], env: dict[str, str]) -> int:
    """Run the commands; the last is the frontend. SIGTERM: the frontend first, alone, until it has drained and
    exited; then the rest."""
    processes = []
    draining = []

    def drain(signum=None, _frame=None):
        if draining:
            return
        draining.append(time.monotonic())
        name, frontend = processes[-1]
        print(f"stand-in: signal {signum}: {name} drains its requests first", flush=True)
        if frontend.poll() is None:
            frontend.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, drain)
    signal.signal(signal.SIGINT, drain)
    processes.extend(start(commands, env))
    while True:
        if draining and processes[-1][1].poll() is not None:
            print(f"stand-in: {processes[-1][0]} exited with {processes[-1][1].returncode} after "
                  f"{time.monotonic() - draining[0]:.1f} s of draining; stopping the rest", flush=True)
            stop_all(processes[:-1])
            return 0
        gone = exited(processes)
        if gone and not draining:
            print(f"stand-in: {gone[0]} exited with {gone[1]}; stopping the rest", flush=True)
            stop_all(processes)
            return gone[1] or 1
        time.sleep(0.2)


TRTLLM_DEFAULT_MAX_BATCH_SIZE = 2048  # LlmArgs.max_batch_size (RELEASES-FACTS.md: 1.3.0rc29 LLM.html)
TRTLLM_DEFAULT_TOKENS_PER_BLOCK = 32  # KvCacheConfig.tokens_per_block
MOCKER_GPU_BLOCKS = 16384  # dynamo.mocker --num-gpu-blocks-override default (1.2.1)
INFERENCE_PATHS = ("/v1/chat/completions", "/v1/completions")


class EngineGauges:
    """trtllm-serve's iteration gauges for /prometheus/metrics, from the requests this server has open. The mocker
    behind it schedules at most `slots` sequences (its --max-num-seqs), as the engine runs at most max_batch_size:
    running = min(open, slots), waiting = the rest. The mocker publishes no KV-cache usage a scrape could read, so
    trtllm_kv_cache_utilization is the share of the batch's sequence slots in use (running / slots): full when the
    batch is, as a saturated engine's cache is."""

    def __init__(self, model: str, slots: int, tokens_per_block: int):
        self.model, self.slots, self.tokens_per_block, self.open = model, slots, tokens_per_block, 0

    def exposition(self) -> str:
        running = min(self.open, self.slots)
        labels = f'{{model_name="{self.model}",engine_type="trtllm"}}'
        gauges = {"trtllm_num_requests_running": running, "trtllm_num_requests_waiting": self.open - running,
                  "trtllm_kv_cache_utilization": running / self.slots,
                  "trtllm_kv_cache_tokens_per_block": self.tokens_per_block,
                  "trtllm_kv_cache_max_blocks": MOCKER_GPU_BLOCKS}
        return "".join(f"# TYPE {name} gauge\n{name}{labels} {value}\n" for name, value in gauges.items())


def engine_settings(options: dict[str, str]) -> dict:
    """What the stand-in takes from trtllm-serve's flags and its --extra_llm_api_options YAML: whether the metrics
    endpoint is mounted, the batch's sequence slots and the KV block size."""
    extra = {}
    path = options.get("--extra_llm_api_options") or options.get("--config")
    if path and Path(path).is_file():
        import yaml
        extra = yaml.safe_load(Path(path).read_text()) or {}
    slots = options.get("--max_batch_size") or extra.get("max_batch_size") or TRTLLM_DEFAULT_MAX_BATCH_SIZE
    tokens_per_block = (extra.get("kv_cache_config") or {}).get("tokens_per_block") or TRTLLM_DEFAULT_TOKENS_PER_BLOCK
    return {"metrics": bool(extra.get("return_perf_metrics") and extra.get("enable_iter_perf_stats")),
            "slots": int(slots), "tokens_per_block": int(tokens_per_block)}


HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade",
              "proxy-connection", "te", "trailer"}


async def front(host: str, port: int, upstream: str, model: str, processes: list[tuple[str, subprocess.Popen]],
                gauges: EngineGauges | None = None) -> int:
    """trtllm-serve's HTTP behaviour in front of the Dynamo frontend: every request passed through, streamed back,
    but /prometheus/metrics, answered from `gauges` when given; SIGTERM drains as uvicorn does (listener closed, open
    requests finished, then exit)."""
    from aiohttp import ClientSession, ClientTimeout, web

    open_requests = 0
    idle = asyncio.Event()
    idle.set()
    stopping = asyncio.Event()
    session = ClientSession(timeout=ClientTimeout(total=None, sock_connect=10), auto_decompress=False)

    async def handle(request: web.Request) -> web.StreamResponse:
        nonlocal open_requests
        if gauges is not None and request.path == "/prometheus/metrics" and request.method == "GET":
            return web.Response(text=gauges.exposition(), content_type="text/plain", charset="utf-8")
        inference = gauges is not None and request.method == "POST" and request.path in INFERENCE_PATHS
        open_requests += 1
        if inference:
            gauges.open += 1
        idle.clear()
        try:
            headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
            async with session.request(request.method, upstream + request.path_qs, headers=headers,
                                       data=await request.read()) as answer:
                response = web.StreamResponse(status=answer.status, headers={
                    k: v for k, v in answer.headers.items() if k.lower() not in HOP_BY_HOP})
                if stopping.is_set():  # uvicorn turns keep-alive off once it shuts down
                    response.headers["Connection"] = "close"
                await response.prepare(request)
                async for chunk in answer.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
                return response
        finally:
            open_requests -= 1
            if inference:
                gauges.open -= 1
            if not open_requests:
                idle.set()

    app = web.Application(client_max_size=1 << 30)
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=3600)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    while not stopping.is_set():
        if site._server is None and exited(processes) is None:
            try:  # listen once the frontend serves the model, as trtllm-serve listens once its engine is up
                async with session.get(upstream + "/v1/models") as answer:
                    if answer.status == 200 and model in [m["id"] for m in (await answer.json())["data"]]:
                        await site.start()
                        print(f"stand-in: listening on {host}:{port}", flush=True)
            except Exception:  # not answering yet (refused, reset, timed out): ask again
                pass
        gone = exited(processes)
        if gone:
            print(f"stand-in: {gone[0]} exited with {gone[1]}; stopping the rest", flush=True)
            stop_all(processes)
            return gone[1] or 1
        try:
            await asyncio.wait_for(stopping.wait(), 0.5)
        except asyncio.TimeoutError:
            pass
    started = time.monotonic()
    print(f"stand-in: SIGTERM: listener closed, draining {open_requests} open requests", flush=True)
    if site._server is not None:
        await site.stop()
    await idle.wait()
    print(f"stand-in: drained after {time.monotonic() - started:.1f} s; stopping the frontend and the mocker",
          flush=True)
    await runner.cleanup()
    await session.close()
    stop_all(list(reversed(processes)))
    return 0


def commands_of(model_path: str, model_name: str, mockers: list[list[str]], frontend: list[str],
                env: dict[str, str]) -> list[tuple[str, list[str]]]:
    """The mockers, then the frontend (last)."""
    hf_cache(model_path, model_name, env["HOME"])
    speedup = env.get("GPT_OSS_STAND_IN_SPEEDUP_RATIO")
    commands = []
    for index, extra in enumerate(mockers or [[]]):
        # A --mocker that names its model (the e2e tier's translation of a worker) is taken as it is, but for its speed.
        extra = list(extra)
        if speedup and "--speedup-ratio" in extra:
            extra[extra.index("--speedup-ratio") + 1] = speedup
        model = [] if "--model-path" in extra else ["--model-path", model_path, "--model-name", model_name]
        flags = [] if "--discovery-backend" in extra else ["--discovery-backend", "file", "--speedup-ratio",
                                                           speedup or "0"]
        commands.append((f"mocker-{index}", [*MOCKER, *model, *extra, *flags]))
    commands.append(("frontend", [*frontend, "--discovery-backend", "file"]))
    return commands


def serve(model_path: str, model_name: str, mockers: list[list[str]], frontend: list[str]) -> int:
    env = environment()
    return supervise(commands_of(model_path, model_name, mockers, frontend, env), env)


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
    engine = engine_settings(server["ignored"])
    gauges = EngineGauges(server["model_name"], engine["slots"], engine["tokens_per_block"]) \
        if engine["metrics"] else None
    print(f"stand-in: engine batch of {engine['slots']} sequences, blocks of {engine['tokens_per_block']} tokens; "
          f"/prometheus/metrics {'served' if gauges else 'not mounted (return_perf_metrics, enable_iter_perf_stats)'}",
          flush=True)
    inner = server["port"] + 1  # the Dynamo frontend, on loopback behind the trtllm-serve front
    frontend = [*FRONTEND, "--http-host", "127.0.0.1", "--http-port", str(inner)]
    env = environment()
    mocker = ["--max-num-seqs", str(engine["slots"]), "--block-size", str(engine["tokens_per_block"])]
    processes = start(commands_of(server["model_path"], server["model_name"], [mocker], frontend, env), env)
    return asyncio.run(front(server["host"], server["port"], f"http://127.0.0.1:{inner}", server["model_name"],
                             processes, gauges))


# --- the pods the Dynamo operator makes -----------------------------------------------------------------------
# What becomes of each flag of a rendered `python3 -m dynamo.trtllm` command line in the mocker's. An unknown flag makes
# translate_worker_args() fail, so a new chart flag needs a decision (keep, rename or drop) here.
KEPT_FLAGS = frozenset({"--model-path", "--disaggregation-mode"})
RENAMED_FLAGS = {"--served-model-name": "--model-name",
                 # dynamo.trtllm's primary flag from 1.3 on (--model-path "obsolete"); the 1.6.1 mocker has --model-path.
                 "--model": "--model-path",
                 # KV-aware routing: the worker's block size is the mocker's --block-size.
                 "--kv-block-size": "--block-size"}
# The mocker rejects these (argparse exit 2), or reads --extra-engine-args as its own JSON.
DROPPED_FLAGS = frozenset({"--extra-engine-args", "--dyn-reasoning-parser", "--dyn-tool-call-parser"})
# The mocker publishes KV events whenever prefix caching is on (its default): no counterpart for these switches.
DROPPED_SWITCHES = frozenset({"--publish-events-and-metrics", "--publish-kv-events"})
MODEL_ROOT = "/model-cache"


class UnknownWorkerFlag(ValueError):
    """The rendered worker command has a flag translate_worker_args() has no rule for."""


def translate_worker_args(trtllm_args: list[str]) -> list[str]:
    """The `dynamo.mocker` arguments for a rendered `dynamo.trtllm` worker's: --model-path and --disaggregation-mode
    kept, --served-model-name renamed --model-name, the TensorRT-LLM-only flags dropped. Every rendered flag takes one
    value."""
    translated = []
    trtllm_args = [arg for arg in trtllm_args if arg not in DROPPED_SWITCHES]
    if len(trtllm_args) % 2:
        raise UnknownWorkerFlag(f"expected flag/value pairs, got {trtllm_args}")
    for flag, value in zip(trtllm_args[::2], trtllm_args[1::2]):
        if flag in KEPT_FLAGS:
            translated += [flag, value]
        elif flag in RENAMED_FLAGS:
            translated += [RENAMED_FLAGS[flag], value]
        elif flag not in DROPPED_FLAGS:
            raise UnknownWorkerFlag(f"no mocker rule for worker flag {flag} {value!r}: add it to KEPT_FLAGS, "
                                    "RENAMED_FLAGS or DROPPED_FLAGS in ci/cluster/stand_in.py")
    return translated


def operator_worker(args: list[str]) -> int:
    """`python3 -m dynamo.trtllm ARGS` in an operator-made worker pod: exec the mocker in its place."""
    try:
        mocker = translate_worker_args(args)
    except UnknownWorkerFlag as error:
        sys.exit(f"dynamo.trtllm stand-in: {error}")
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    flags = ["--speedup-ratio", env.get("GPT_OSS_STAND_IN_SPEEDUP_RATIO") or "0"]
    if env.get("DYN_DISCOVERY_BACKEND"):
        flags += ["--discovery-backend", env["DYN_DISCOVERY_BACKEND"]]
    argv = [*MOCKER, *mocker, *flags]
    print(f"stand-in for dynamo.trtllm (no GPU, no TensorRT-LLM): {shlex.join(argv)}", flush=True)
    os.execve(sys.executable, argv, env)
    return 1  # not reached


def operator_frontend(args: list[str]) -> int:
    """`python3 -m dynamo.frontend ARGS` in the operator's frontend pod: the real frontend, with the model cache's
    checkpoints in its (offline) Hugging Face cache."""
    home = os.environ.get("HOME", "")
    if not home or not os.access(home, os.W_OK):
        home = os.environ.get("TMPDIR") or "/tmp"
    root = Path(os.environ.get("GPT_OSS_STAND_IN_MODEL_ROOT") or MODEL_ROOT)
    names = []
    for config in sorted(root.glob("*/*/config.json")):
        name = str(config.parent.relative_to(root))
        hf_cache(str(config.parent), name, home)
        names.append(name)
    env = dict(os.environ, HOME=home, HF_HUB_OFFLINE="1")
    print(f"stand-in for the Dynamo runtime image: the real dynamo.frontend; Hugging Face cache under {home} for "
          f"{names or 'no checkpoint on ' + str(root)}", flush=True)
    os.execve(sys.executable, [*FRONTEND, *args], env)
    return 1  # not reached


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "dynamo.trtllm":
        return operator_worker(sys.argv[2:])
    if len(sys.argv) > 1 and sys.argv[1] == "dynamo.frontend":
        return operator_frontend(sys.argv[2:])
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
