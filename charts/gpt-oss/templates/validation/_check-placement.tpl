{{- /* Placement rules: what must run on one node fits one node. */}}

{{/*
Placement: the worker pods kept on one node (workers.sameNode) hold no more GPUs than a node has, counting the most
pods that can run (each scaler's maxReplicas, the planner's GPU budget), and a model cache one node mounts at a time
(ReadWriteOnce, ReadWriteOncePod) is not shared by pods that can land on several nodes.
Usage: {{ include "gpt-oss.checkValues.placement" . }}
*/}}
{{- define "gpt-oss.checkValues.placement" -}}
{{- if and (eq .Values.runtime "dynamo") .Values.workers.sameNode }}
{{- $plan := index . (include "gpt-oss.object" (list "gpt-oss.plan" .)) }}
{{- $gpu := index . (include "gpt-oss.object" (list "gpt-oss.gpuFacts" .)) }}
{{- $total := 0 }}
{{- $parts := list }}
{{- /* The most GPUs: a KEDA or HPA scaler may grow its role to maxReplicas, the planner its roles to its budget. */}}
{{- $most := 0 }}
{{- $mostParts := list }}
{{- $plannerStart := 0 }}
{{- $plannerKeys := list }}
{{- range $plan.roles }}
{{- $total = add $total (int .gpus) }}
{{- $parts = append $parts (printf "%s: %d x %d" .valuesKey (int .replicas) (int .gpusPerReplica)) }}
{{- if eq .scaledBy "planner" }}
{{- $plannerStart = add $plannerStart (int .gpus) }}
{{- $plannerKeys = append $plannerKeys .valuesKey }}
{{- else if .scaledBy }}
{{- $pods := max (int .replicas) (int .maxReplicas) }}
{{- $most = add $most (mul $pods (int .gpusPerReplica)) }}
{{- $mostParts = append $mostParts (printf "%s: %d (%s.autoscaling.maxReplicas) x %d" .valuesKey $pods .valuesKey (int .gpusPerReplica)) }}
{{- else }}
{{- $most = add $most (int .gpus) }}
{{- $mostParts = append $mostParts (printf "%s: %d (%s.replicas) x %d" .valuesKey (int .replicas) .valuesKey (int .gpusPerReplica)) }}
{{- end }}
{{- end }}
{{- if $plannerKeys }}
{{- $budget := max $plannerStart (int $.Values.planner.maxGpuBudget) }}
{{- $most = add $most $budget }}
{{- $mostParts = append $mostParts (printf "%s: up to %d GPUs (planner.maxGpuBudget)" (join " and " $plannerKeys) $budget) }}
{{- end }}
{{- /* Rule: workers kept on one node fit its GPUs. */}}
{{- if gt $total (int $gpu.perNode) }}
{{- fail (printf (print "workers.sameNode=true puts every worker pod on one node, but they would hold %d GPUs (%s) and a %s "
  "node has %d (gpu.perNode); allowed: at most %d GPUs in all (fewer replicas or GPUs per pod), or workers.sameNode=false")
  $total (join "; " $parts) .Values.gpu.type (int $gpu.perNode) (int $gpu.perNode)) }}
{{- end }}
{{- /* Rule: workers kept on one node fit its GPUs at the most pods their scalers and the planner may run. */}}
{{- if gt $most (int $gpu.perNode) }}
{{- fail (printf (print "workers.sameNode=true puts every worker pod on one node, but at the most pods their scalers and the "
  "planner may run they would hold %d GPUs (%s) and a %s node has %d (gpu.perNode): the pods beyond it would stay Pending; "
  "allowed: at most %d GPUs in all (a lower autoscaling.maxReplicas or planner.maxGpuBudget), or workers.sameNode=false")
  $most (join "; " $mostParts) .Values.gpu.type (int $gpu.perNode) (int $gpu.perNode)) }}
{{- end }}
{{- end }}
{{- $cache := index . (include "gpt-oss.object" (list "gpt-oss.cachePlacement" .)) }}
{{- /* Rule: a cache one node mounts is used only by pods that stay on one node. */}}
{{- if and $cache.singleNode $cache.spans }}
{{- fail (printf (print "modelCache.accessMode=%s lets %s mount the model cache at a time, but %s (it is mounted by %s), "
  "so pods would wait in ContainerCreating (Multi-Attach error); allowed: modelCache.accessMode=ReadWriteMany, or "
  "ReadWriteOnce with %s and every pod on that node") .Values.modelCache.accessMode $cache.holder $cache.why
  (join ", " $cache.pods) $cache.fix) }}
{{- end }}
{{- end }}
