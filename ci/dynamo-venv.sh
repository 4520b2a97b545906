#!/usr/bin/env bash
# The e2e tier's venv of a Dynamo release line other than the main venv's 1.2 (tests/e2e: dynamo-1.6, dynamo-1.7), from
# requirements-e2e-dynamo-<line>.txt, the line read from the venv's name.
# usage: bash ci/dynamo-venv.sh [VENV]   (default .venv-dynamo-1.6; .venv-dynamo-1.7 for the 1.7 line; the e2e tier
#        finds them there, or at $GPT_OSS_DYNAMO_16_PYTHON / $GPT_OSS_DYNAMO_17_PYTHON)
# Both lines' ai-dynamo require aisimulate, which cannot install here (each requirements file says why), so ai-dynamo
# and ai-dynamo-runtime go in with --no-deps, then the rest of the pinned set, also --no-deps (it is the whole resolved
# set). Ends by importing what the tier runs: the frontend and the mocker.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv=${1:-.venv-dynamo-1.6}
line=${venv##*-dynamo-}
requirements=requirements-e2e-dynamo-${line}.txt
if [[ ! -f $requirements ]]; then
  echo "ci/dynamo-venv.sh: $venv names no line with a requirements file (allowed: .venv-dynamo-1.6, .venv-dynamo-1.7)" >&2
  exit 2
fi
python3 -m venv "$venv"
# pip pinned by version and hash (requirements-pip.txt), not whatever the index serves.
"$venv/bin/python" -m pip install --quiet --require-hashes -r requirements-pip.txt
mapfile -t dynamo < <(grep -E '^ai-dynamo(-runtime)?==' "$requirements")
# by uv, as pip would (ci/uv-install.sh)
bash ci/uv-install.sh "$venv" --no-deps "${dynamo[@]}"
bash ci/uv-install.sh "$venv" --no-deps -r "$requirements"
"$venv/bin/python" -c "import dynamo.frontend, dynamo.mocker, prometheus_api_client"
echo "ai-dynamo $("$venv/bin/python" -c 'from importlib.metadata import version; print(version("ai-dynamo"))') in $venv"
