{{- /* Parallelism rules (runtime dynamo): how each worker role splits over its GPUs. */}}

{{/*
Parallelism of each worker role (runtime dynamo): expert-parallel groups, attention-DP, GPUs per pod.
Usage: {{ include "gpt-oss.checkValues.parallelism" . }}
*/}}
{{- define "gpt-oss.checkValues.parallelism" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $gpu := index . (include "gpt-oss.object" (list "gpt-oss.gpuFacts" .)) }}
{{- $w := .Values.workers }}
{{- range $row := include "gpt-oss.roleTable" . | fromJsonArray }}
{{- $role := get $w $row.key }}
{{- if $role.enabled }}
{{- $key := printf "workers.%s" $row.key }}
{{- $tp := int $role.tensorParallelSize }}
{{- $pp := int $role.pipelineParallelSize }}
{{- $ep := int $role.expertParallelSize }}
{{- $gpus := mul $tp $pp }}
{{- /* Rule: expertParallelSize divides tensorParallelSize. */}}
{{- if mod $tp $ep }}
{{- fail (printf (print "%s.expertParallelSize=%d must divide %s.tensorParallelSize=%d: the MoE layers split the %d tensor-parallel "
  "ranks into expert-parallel groups; allowed: a divisor of %d") $key $ep $key $tp $tp $tp) }}
{{- end }}
{{- /* Rule: attention-DP needs more than one tensor-parallel rank. */}}
{{- if and $role.attentionDP (eq $tp 1) }}
{{- fail (printf (print "%s.attentionDP=true needs %s.tensorParallelSize > 1 (attention-DP runs one batch per tensor-parallel rank); "
  "set attentionDP=false or tensorParallelSize 2, 4 or 8") $key $key) }}
{{- end }}
{{- /* Rule: a pod's GPUs fit one node. */}}
{{- if gt $gpus (int $gpu.perNode) }}
{{- fail (printf (print "%s needs %d GPUs per pod (tensorParallelSize %d x pipelineParallelSize %d), but a %s node has %d "
  "(gpu.perNode); allowed: at most %d GPUs per pod") $key $gpus $tp $pp $.Values.gpu.type (int $gpu.perNode) (int $gpu.perNode)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
