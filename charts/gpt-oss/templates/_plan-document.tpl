{{- /* The plan as a reader gets it: the document NOTES.txt formats and the ConfigMap <fullname>-plan carries. */}}

{{/*
The plan as a reader gets it, computed once per render (NOTES.txt formats it; the ConfigMap <fullname>-plan carries
it for tools/plan.py and tools/predict.py): GPUs, layout, each role's shape and quantization, decode slots, the
admission gate's capacity, benchmark, sizing warnings, the TensorRT-LLM release that runs ("" for an unversioned
image), and with the SLA planner the account it runs as and what it may do (gpt-oss.planner.identity).
Usage: {{ $doc := index . (include "gpt-oss.object" (list "gpt-oss.planDocument" .)) }}
*/}}
{{- define "gpt-oss.planDocument" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computePlanDocument" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.planDocument, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computePlanDocument" . }} (templates read it through gpt-oss.planDocument)
*/}}
{{- define "gpt-oss.computePlanDocument" -}}
{{- $plan := index . (include "gpt-oss.object" (list "gpt-oss.plan" .)) }}
{{- $quantization := include "gpt-oss.quantization" . | fromYaml }}
{{- $trtllmServe := eq .Values.runtime "trtllm-serve" }}
{{- $roles := list }}
{{- range $plan.roles }}
{{- $roles = append $roles (dict "component" .component "valuesKey" .valuesKey "mode" .mode
  "replicas" (int .replicas) "gpusPerReplica" (int .gpusPerReplica) "gpus" (int .gpus)
  "tensorParallelSize" (int .tensorParallelSize) "expertParallelSize" (int .expertParallelSize) "attentionDpRanks" (int .attentionDpRanks)
  "slots" (int .slots) "gateAdmitsPerReplica" (int .gateAdmitsPerReplica) "quantization" (get $quantization .key)) }}
{{- end }}
{{- $layout := ternary "trtllm-serve" (ternary "disaggregated" "aggregated" $plan.disaggregated) $trtllmServe }}
{{- $benchmark := dict "gpuCount" (int $plan.benchmark.gpuCount) "concurrency" (int $plan.benchmark.concurrency)
  "requestCount" (int $plan.benchmark.requestCount) }}
{{- $doc := dict "runtime" .Values.runtime "gpuType" .Values.gpu.type "totalGpus" (int $plan.totalGpus) "layout" $layout
  "roles" $roles "decodeSlots" (int $plan.decodeSlots) "admissionCapacity" (int $plan.admissionCapacity) "benchmark" $benchmark
  "warnings" (include "gpt-oss.warnings" . | fromYamlArray) "trtllmRelease" (include "gpt-oss.trtllmRelease" .)
  "engineKeys" (pick (index . (include "gpt-oss.object" (list "gpt-oss.engineKeyList" .))) "release" "list" "summary") }}
{{- if and .Values.planner.enabled (not $trtllmServe) }}
{{- $_ := set $doc "planner" (include "gpt-oss.planner.identity" . | fromYaml) }}
{{- end }}
{{- toYaml $doc }}
{{- end }}
