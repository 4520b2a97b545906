#!/usr/bin/env bash
# Create a kind cluster for the live-cluster tier (pytest -m cluster): one control plane, one worker
# without GPUs (for the model download Job) and fake GPU workers for every target
# (2x GB200 arm64 4 GPUs, 1x B200 amd64 8 GPUs, 1x H100 amd64 8 GPUs; see python -m ci.cluster kind-nodes),
# then the Dynamo CRDs. Nothing here needs a GPU.
#
#   ci/cluster/kind-setup.sh [--name gpt-oss] [--kubeconfig .kind/kubeconfig] [--install-tools]
#                    [--crds DIR | --crds-chart CHART_REF | --no-crds] [--operator-chart CHART_REF]
#
# --crds DIR          apply the Dynamo CRD files in DIR (default: the folder where the tests find the
#                     upstream DGD CRD: $GPT_OSS_SHARED_DIR/dynamo/crds, $GPT_OSS_CRDS_DIR or .cache/crds,
#                     which `python3 -m ci.cluster crds` fills), conversion rewritten to None: no operator
#                     serves the webhook
# --crds-chart REF    `helm install` the Dynamo CRD chart instead (e.g. the dynamo-crds chart from NGC)
# --operator-chart REF `helm install` the Dynamo platform chart (operator + its own CRDs); the tier then
#                     needs GPT_OSS_DYNAMO_OPERATOR=1 and GPT_OSS_CRD_SOURCE=none
# --install-tools     download the pinned kind, kubectl and helm into .kind/bin (CI; Linux amd64 or arm64), each
#                     checked against the sha256 pinned below before it is kept
set -euo pipefail

KIND_VERSION=v0.27.0
# The node image kind v0.27.0 defaults to, by digest (kind's pkg/apis/config/defaults/image.go at tag v0.27.0).
KIND_NODE_IMAGE=kindest/node:v1.32.2@sha256:f226345927d7e348497136874b6d207e0b32cc52154ad8323129352923a3142f
KUBECTL_VERSION=v1.32.2
HELM_VERSION=v3.17.1
# The sha256 of each download, per architecture: what kind's release (kind-linux-<arch>.sha256sum), dl.k8s.io
# (kubectl.sha256) and get.helm.sh (helm-<version>-linux-<arch>.tar.gz.sha256sum) publish, as read in
# repositories that pin them: kind in f110/mono build/private/kind/assets.bzl (also cashapp/hermit-packages
# kind.hcl), kubectl in loopingz/rules_k8s_cd lib/private/kubectl_toolchain.bzl, helm in abrisco/rules_helm
# helm/private/versions.bzl (SRI sha256; the same hex in other projects' pins of get.helm.sh's .sha256sum files).
# A version change needs its new sums here: a download that does not match is removed and the script fails.
declare -A SHA256=(
  [kind-amd64]=a6875aaea358acf0ac07786b1a6755d08fd640f4c79b7a2e46681cc13f49a04b
  [kind-arm64]=5e4507a41c69679562610b1be82ba4f80693a7826f4e9c6e39236169a3e4f9d0
  [kubectl-amd64]=4f6a959dcc5b702135f8354cc7109b542a2933c46b808b248a214c1f69f817ea
  [kubectl-arm64]=7381bea99c83c264100f324c2ca6e7e13738a73b8928477ac805991440a065cd
  [helm-amd64]=3b66f3cd28409f29832b1b35b43d9922959a32d795003149707fea84cbcd4469
  [helm-arm64]=c86c9b23602d4abbfae39d9634e25ab1d0ea6c4c16c5b154113efe316a402547
)

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
name=gpt-oss
kubeconfig="$repo_root/.kind/kubeconfig"
crds_dir=""
crds_chart=""
operator_chart=""
install_tools=false
no_crds=false

while [[ $# -gt 0 ]]; do
  case "$1" in
    --name) name=$2; shift 2 ;;
    --kubeconfig) kubeconfig=$2; shift 2 ;;
    --crds) crds_dir=$2; shift 2 ;;
    --crds-chart) crds_chart=$2; shift 2 ;;
    --no-crds) no_crds=true; shift ;;
    --operator-chart) operator_chart=$2; shift 2 ;;
    --install-tools) install_tools=true; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
kubeconfig=$(realpath -m -- "$kubeconfig")

# A verb of the test cluster's room, run from the checkout's root (`python3 -m ci.cluster <verb>`).
ci_program() { (cd "$repo_root" && python3 -m ci.cluster "$@"); }

# download URL FILE SHA256: fetch URL into FILE, kept only when its sha256 is the pinned one.
download() {
  curl -fsSLo "$2.part" "$1"
  if ! echo "$3  $2.part" | sha256sum --check --quiet; then
    rm -f "$2.part"
    echo "$1: sha256 differs from the pinned $3: not installed" >&2
    exit 1
  fi
  mv "$2.part" "$2"
}

if $install_tools; then
  case "$(uname -m)" in
    x86_64|amd64) arch=amd64 ;;
    aarch64|arm64) arch=arm64 ;;
    *) echo "--install-tools: no pinned binaries for $(uname -m) (amd64, arm64)" >&2; exit 2 ;;
  esac
  bin="$repo_root/.kind/bin"
  mkdir -p "$bin"
  download "https://kind.sigs.k8s.io/dl/$KIND_VERSION/kind-linux-$arch" "$bin/kind" "${SHA256[kind-$arch]}"
  download "https://dl.k8s.io/release/$KUBECTL_VERSION/bin/linux/$arch/kubectl" "$bin/kubectl" "${SHA256[kubectl-$arch]}"
  download "https://get.helm.sh/helm-$HELM_VERSION-linux-$arch.tar.gz" "$bin/helm.tar.gz" "${SHA256[helm-$arch]}"
  tar -xzf "$bin/helm.tar.gz" -C "$bin" --strip-components=1 "linux-$arch/helm"
  rm "$bin/helm.tar.gz"
  chmod +x "$bin/kind" "$bin/kubectl" "$bin/helm"
  export PATH="$bin:$PATH"
  if [[ -n "${GITHUB_PATH:-}" ]]; then echo "$bin" >> "$GITHUB_PATH"; fi
fi

mkdir -p "$(dirname "$kubeconfig")"
export KUBECONFIG="$kubeconfig"

# Node labels from the config survive; the GPU look is added after creation (the kubelet owns arch).
# One worker per node of each profile in ci/cluster/gpu-node-profiles.json (shared with python -m ci.cluster control-plane).
python3 - "$repo_root/ci/gpu-node-profiles.json" > "$(dirname "$kubeconfig")/kind-config.yaml" <<'PY'
import json, sys
table = json.load(open(sys.argv[1]))
print("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n  - role: control-plane")
for name, profile in table["profiles"].items():
    for _ in range(profile["nodes"]):
        print(f"  - role: worker\n    labels: {{{table['profileLabel']}: {name}}}")
PY
kind create cluster --name "$name" --image "$KIND_NODE_IMAGE" --kubeconfig "$kubeconfig" --wait 120s \
  --config "$(dirname "$kubeconfig")/kind-config.yaml"

ci_program kind-nodes --kubeconfig "$kubeconfig" --apply
# A status sync or two later the patched GPUs must still be there (the kubelet keeps them).
sleep 20
ci_program kind-nodes --kubeconfig "$kubeconfig" --check

if [[ -n "$operator_chart" ]]; then
  helm install dynamo-platform "$operator_chart" --namespace dynamo-system --create-namespace --wait --timeout 10m
elif [[ -n "$crds_chart" ]]; then
  helm install dynamo-crds "$crds_chart" --namespace default --wait
elif ! $no_crds; then
  if [[ -z "$crds_dir" ]]; then
    # python -m ci.cluster crds prints where the tests find the DGD CRD, or says where it looked and how to get it.
    dgd_crd=$(ci_program crds --where nvidia.com_dynamographdeployments.yaml) || {
      echo "pass --crds DIR, --crds-chart REF or --no-crds" >&2
      exit 1
    }
    crds_dir=$(dirname "$dgd_crd")
  fi
  if [[ ! -d "$crds_dir" ]]; then
    echo "no Dynamo CRDs at $crds_dir: pass --crds DIR, --crds-chart REF or --no-crds" >&2
    exit 1
  fi
  # Server-side: the DGD CRD (~1.6 MB) is too big for kubectl's last-applied annotation.
  for crd in "$crds_dir"/nvidia.com_*.yaml; do
    python3 - "$crd" <<'PY' | kubectl apply --server-side --force-conflicts -f -
import json, sys, yaml
crd = yaml.safe_load(open(sys.argv[1]))
crd["spec"]["conversion"] = {"strategy": "None"}  # no operator, so no conversion webhook
crd["metadata"] = {k: crd["metadata"][k] for k in ("name", "labels", "annotations") if k in crd["metadata"]}
crd.pop("status", None)
json.dump(crd, sys.stdout)
PY
  done
  kubectl wait --for=condition=Established --timeout=60s crd --all
fi

kubectl get nodes -L kubernetes.io/arch,nvidia.com/gpu.product,gpt-oss.test/profile
echo "cluster ready: KUBECONFIG=$kubeconfig"
