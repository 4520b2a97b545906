#!/usr/bin/env bash
# The e2e tier's ai-dynamo 1.6.1 venv (the dynamo-1.6 release line of tests/e2e), from requirements-e2e-dynamo-1.6.txt.
# usage: bash ci/dynamo-venv.sh [VENV]   (default .venv-dynamo-1.6; the e2e tier finds it there, or at
#        $GPT_OSS_DYNAMO_16_PYTHON)
# ai-dynamo 1.6.1 requires aisimulate, which cannot install here (requirements-e2e-dynamo-1.6.txt says why), so
# ai-dynamo and ai-dynamo-runtime go in with --no-deps, then the rest of the pinned set, also --no-deps (it is the
# whole resolved set). Ends by importing what the tier runs: the frontend and the mocker.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv=${1:-.venv-dynamo-1.6}
requirements=requirements-e2e-dynamo-1.6.txt
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
mapfile -t dynamo < <(grep -E '^ai-dynamo(-runtime)?==' "$requirements")
"$venv/bin/python" -m pip install --quiet --no-deps "${dynamo[@]}"
"$venv/bin/python" -m pip install --quiet --no-deps -r "$requirements"
"$venv/bin/python" -c "import dynamo.frontend, dynamo.mocker, prometheus_api_client"
echo "ai-dynamo $("$venv/bin/python" -c 'from importlib.metadata import version; print(version("ai-dynamo"))') in $venv"
