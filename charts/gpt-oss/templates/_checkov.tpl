{{- /* Policy-scan waivers scoped to one object: Checkov's checkov.io/skip<N> annotations, each with its reason. */}}

{{/*
The checkov.io/skip<N> annotations of one object, "CKV_..=<reason>" each (Checkov splits on the "=", so a
reason holds none). Reasons are keyed by check id, or by "<id> <case>" where one check has two reasons.
The NetworkPolicy check is waived only while networkPolicy.enabled is false.
Usage: {{ include "gpt-oss.checkovSkips" (dict "root" . "checks" (list "CKV_K8S_11" "CKV_K8S_40")) | nindent 4 }}
*/}}
{{- define "gpt-oss.checkovSkips" -}}
{{- $reasons := dict
  "CKV_K8S_11" "No CPU limit: a CFS quota throttles busy threads and buys nothing; CPU requests are set"
  "CKV_K8S_40" "Runs as UID 1000, the image's non-root user, which owns its home and caches"
  "CKV_K8S_22" "The runtime writes TensorRT-LLM, Triton, torch and tokenizer caches under the image's own paths"
  "CKV_K8S_38" "Dynamo's frontend and workers register and discover each other through the Kubernetes API"
  "CKV_K8S_38 epp" "The endpoint picker watches the pool's pods and its InferencePool through the Kubernetes API (its Role)"
  "CKV_K8S_40 epp" "Runs as the chart's non-root UID 1000 (securityContext.pod) with a read-only root filesystem"
  "CKV_K8S_8 dynamo" "The Dynamo operator gives every component its liveness probe"
  "CKV_K8S_9 dynamo" "The Dynamo operator gives every component its readiness probe"
  "CKV_K8S_8 test" "A run-to-completion helm test Pod, which nothing routes traffic to"
  "CKV_K8S_9 test" "A run-to-completion helm test Pod, which nothing routes traffic to"
  "CKV2_K8S_6" "NetworkPolicies are opt-in (networkPolicy.enabled): a default deny needs addresses only the cluster owner knows"
}}
{{- $n := 0 }}
{{- range $key := .checks }}
{{- if not (and (eq $key "CKV2_K8S_6") $.root.Values.networkPolicy.enabled) }}
{{- $n = add1 $n }}
checkov.io/skip{{ $n }}: {{ printf "%s=%s" (first (splitList " " $key))
  (required (printf "gpt-oss.checkovSkips: no reason for %s" $key) (get $reasons $key)) | quote }}
{{- end }}
{{- end }}
{{- end }}
