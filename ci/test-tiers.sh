#!/usr/bin/env bash
# Every tier, as CI runs it (the README's test command), on three control planes on 127.0.0.1 (python -m ci.cluster control-plane),
# so that nothing one group of tests does reaches another and all three groups run at once:
#   cluster plane: pytest -n 3 --dist loadfile -m "not serial and not node and not argocd"   (every tier, 3 workers)
#   serial plane:  pytest -m serial   (the tests that restart the API server or etcd, or hold the fake GPU nodes)
#   node plane:    pytest -m node     (the kubelet node: one per host, one process)
#   gitops plane:  pytest -m argocd   (a live Argo CD, whose controller watches the whole cluster)
# The serial, node and argocd runs print their output after the workers' run. With CI=true a plane or node that cannot start
# fails the run, and so does a cluster test that would skip for want of a part (tests/helpers/__init__.py
# skip_for_missing_part); elsewhere they skip, saying why. Every run happens; any failure fails the script. Whatever
# happens, the planes stop, and then nothing they started may still run.
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
serial_plane="$(state_folder serial)"
node_plane="$(state_folder node)"
gitops_plane="$(state_folder gitops)"
logs="$PWD/.envtest"
mkdir -p "$logs"
background=()
declare -A plane_of=()
sampler=""
starting=()

stop_planes() {
  [[ -z "$sampler" ]] || kill "$sampler" 2>/dev/null || true
  # a plane still starting (another's start failed) ends first: then its record lists all it started
  for pid in "${starting[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  # a group run behind the node's leads a process group of its own (its xdist workers): end all of it
  for pid in "${background[@]}"; do
    { kill -- "-$pid" 2>/dev/null || kill -- "$pid" 2>/dev/null; } && wait "$pid" 2>/dev/null
  done
  for plane in "$node_plane" "$serial_plane" "$gitops_plane" "$cluster_plane"; do
    "$PYTHON" -m ci.cluster control-plane stop --dir "$plane"
  done
  "$PYTHON" -m ci.cluster control-plane leftovers || exit 1
}
trap stop_planes EXIT
trap 'exit 130' INT TERM

# start_plane FOLDER NICENESS [ENV...]: in the background, its output in the plane's start log. The four planes start
# at once: a start mostly waits on its servers' health (about 34 s one after the other, CI's run of 2026-12-05).
start_plane() {
  local folder="$1" niceness="$2" name="${1#"$logs"/}"
  shift 2
  nice -n "$niceness" env "$@" "$PYTHON" -m ci.cluster control-plane start --dir "$folder" \
    >"$logs/start-${name%%/*}.log" 2>&1 &
  starting+=($!)
}
# planes_started: each start's output; exit code 3 (no Kubernetes binaries here) lets the tiers skip, saying why,
# outside CI.
planes_started() {
  local pid started plane
  while (( ${#starting[@]} )); do
    pid="${starting[0]}"
    started=0
    wait "$pid" || started=$?
    starting=("${starting[@]:1}")  # waited for: its pid may be another process's from now on
    if [[ $started -ne 0 && ( $started -ne 3 || "${CI:-}" == "true" ) ]]; then
      cat "$logs"/start-*.log
      exit "$started"
    fi
  done
  for plane in cluster serial gitops node; do cat "$logs/start-$plane.log"; done
}
# The node's tests wait on real pods far more than they compute (alone they use about a third of two cores), yet they
# are the longest group: the other groups, CPU-bound, run behind them at a lower priority, and take what the node
# leaves. Each runs in a session of its own whose autogroup has that niceness (python -m ci.cluster behind): under
# sched_autogroup a session is scheduled as one group, so in this script's session, beside the node's tests, their
# `nice` alone would count for nothing against the node's pods. The servers they start in sessions of their own keep it
# (ci/cluster/processes.py keep_niceness).
behind=10
run_behind() { "$PYTHON" -m ci.cluster behind "$behind" -- "$@"; }
start_plane "$cluster_plane" "$behind" GPT_OSS_NODE=0
start_plane "$serial_plane" "$behind" GPT_OSS_NODE=0
start_plane "$gitops_plane" "$behind" GPT_OSS_NODE=0
start_plane "$node_plane" 0
planes_started

status=0
# aiconfigurator's predictions, made once per run and shared by the groups' processes (tools/gptoss/predict.py).
rm -rf "$logs/predictions"
export GPT_OSS_PREDICTION_CACHE="$logs/predictions"
# The slowest steps of each group, so a run's time can be read from its log (the budgets in docs/testing.md).
durations=(--durations=15 --durations-min=5)
# and each group's JUnit report, which python -m ci.cluster timings sums per file at the end.
rm -f "$logs"/*-tests.xml
# What the machine does meanwhile (CPU, memory, I/O every 30 s), to read a slow run by.
if command -v vmstat >/dev/null 2>&1; then
  vmstat -t 30 >"$logs/vmstat.log" 2>&1 &
  sampler=$!
fi
echo "serial and node tests: running beside the others, each group on its own control plane; their output follows"
KUBECONFIG="$serial_plane/kubeconfig" run_behind "$PYTHON" -m pytest -m serial "${durations[@]}" \
  --junitxml="$logs/serial-tests.xml" "$@" >"$logs/serial-tests.log" 2>&1 &
background+=($!)
plane_of[$!]="$serial_plane"
: >"$logs/node-steps.log"
KUBECONFIG="$node_plane/kubeconfig" GPT_OSS_NODE_STEPS_LOG="$logs/node-steps.log" "$PYTHON" -m pytest -m node \
  "${durations[@]}" --junitxml="$logs/node-tests.xml" "$@" >"$logs/node-tests.log" 2>&1 &
background+=($!)
plane_of[$!]="$node_plane"
KUBECONFIG="$gitops_plane/kubeconfig" run_behind "$PYTHON" -m pytest -m argocd "${durations[@]}" \
  --junitxml="$logs/argocd-tests.xml" "$@" >"$logs/argocd-tests.log" 2>&1 &
background+=($!)
plane_of[$!]="$gitops_plane"
# In the background too (its own session does not get the terminal's Ctrl-C): stop_planes ends it.
KUBECONFIG="$cluster_plane/kubeconfig" run_behind "$PYTHON" -m pytest -n 3 --dist loadfile -m "not serial and not node and not argocd" \
  "${durations[@]}" --junitxml="$logs/cluster-tests.xml" "$@" &
background+=($!)
# Each group's plane is stopped as soon as the group ends: an idle plane still takes about a twentieth of a core (API
# server, etcd, controllers; the node's kubelet and containerd more), which the groups still running need, and the
# serial and Argo CD groups end minutes before the others.
while (( ${#background[@]} )); do
  finished=""
  wait -n -p finished "${background[@]}" || status=1
  [[ -z "${plane_of[$finished]:-}" ]] || "$PYTHON" -m ci.cluster control-plane stop --dir "${plane_of[$finished]}" >/dev/null
  running=()
  for pid in "${background[@]}"; do [[ "$pid" == "$finished" ]] || running+=("$pid"); done
  background=("${running[@]}")
done
[[ -z "$sampler" ]] || kill "$sampler" 2>/dev/null || true
cat "$logs/serial-tests.log" "$logs/node-tests.log" "$logs/argocd-tests.log"
echo "== the node tests' steps (time of day, seconds since each run's start)"
cat "$logs/node-steps.log"
echo "== where each group's time went"
"$PYTHON" -m ci.cluster timings "$logs"/{cluster,serial,node,argocd}-tests.xml
[[ ! -s "$logs/vmstat.log" ]] || { echo "== vmstat every 30 s while the groups ran"; cat "$logs/vmstat.log"; }
exit "$status"
