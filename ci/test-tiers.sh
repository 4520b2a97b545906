#!/usr/bin/env bash
# Every tier, as CI runs it (the README's test command): two control planes on 127.0.0.1 (ci/control-plane.py), one
# for the cluster tier and one with the kubelet node for the node tests, which run beside everything else:
#   cluster plane: pytest -n 3 --dist loadfile -m "not serial and not node"   (every tier, three workers)
#                  then pytest -m serial                                        (the tests that restart its API server
#                                                                                or etcd, or hold its GPU nodes: alone)
#   node plane:    pytest -m node, from the start to the end of both           (one node per host, in one process)
# With CI=true a plane or node that cannot start fails the run, and so does a cluster test that would skip for want
# of a part (tests/helpers.py skip_for_missing_part); elsewhere they skip, saying why. Every run happens; any failure
# fails the script. Whatever happens, both planes stop, and then nothing they started may still run.
# PYTHON: the interpreter with the test extras (default: python). Extra arguments go to every pytest.
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"

# Each plane's state sits 110+ characters deep whatever the checkout's path, as in CI work folders: the node keeps its
# unix sockets under /run/gpt-oss-node (a socket path may not exceed 107 bytes); tests/cluster/test_node.py checks it.
state_folder() {
  local folder="$PWD/.envtest/$1"
  while (( ${#folder} < 110 )); do folder="$folder/state"; done
  echo "$folder"
}
cluster_plane="$(state_folder cluster)"
node_plane="$(state_folder node)"
node_log="$PWD/.envtest/node-tests.log"

stop_planes() {
  [[ -n "${node_tests:-}" ]] && kill -- "$node_tests" 2>/dev/null && wait "$node_tests" 2>/dev/null
  "$PYTHON" ci/control-plane.py stop --dir "$node_plane"
  "$PYTHON" ci/control-plane.py stop --dir "$cluster_plane"
  "$PYTHON" ci/control-plane.py leftovers || exit 1
}
trap stop_planes EXIT
trap 'exit 130' INT TERM

# start_plane FOLDER [ENV...]: exit code 3 (no Kubernetes binaries here) lets the tiers skip, saying why, outside CI.
start_plane() {
  local folder="$1" started=0
  shift
  env "$@" "$PYTHON" ci/control-plane.py start --dir "$folder" || started=$?
  if [[ $started -ne 0 && ( $started -ne 3 || "${CI:-}" == "true" ) ]]; then
    exit "$started"
  fi
}
start_plane "$cluster_plane" GPT_OSS_NODE=0
start_plane "$node_plane"

status=0
mkdir -p "$(dirname "$node_log")"
echo "node tests: running beside the others against their own control plane; their output follows the others'"
KUBECONFIG="$node_plane/kubeconfig" "$PYTHON" -m pytest -m node "$@" >"$node_log" 2>&1 &
node_tests=$!
export KUBECONFIG="$cluster_plane/kubeconfig"
"$PYTHON" -m pytest -n 3 --dist loadfile -m "not serial and not node" "$@" || status=1
"$PYTHON" -m pytest -m serial "$@" || status=1
wait "$node_tests" || status=1
node_tests=""
cat "$node_log"
exit "$status"
