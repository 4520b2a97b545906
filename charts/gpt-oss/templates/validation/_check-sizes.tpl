{{- /* Size rules: a volume or a limit holds what it must hold (the sizes are ../shared/FACTS.md's). */}}

{{/*
Sizes: the model cache PVC the chart creates holds the model, a pod's memory limit holds its /dev/shm, and a GPU
pod's GPU count is the one the chart derives from its parallelism.
Usage: {{ include "gpt-oss.checkValues.sizes" . }}
*/}}
{{- define "gpt-oss.checkValues.sizes" -}}
{{- $mc := .Values.modelCache }}
{{- /* Rule: a size is a quantity with its unit: --set types 100 as a number, and a bare number is bytes to Kubernetes. */}}
{{- $sizes := dict "modelCache.size" .Values.modelCache.size "workers.sharedMemorySize" .Values.workers.sharedMemorySize
  "trtllmServe.sharedMemorySize" .Values.trtllmServe.sharedMemorySize }}
{{- range $key := keys $sizes | sortAlpha }}
{{- $size := get $sizes $key }}
{{- if and (not (kindIs "string" $size)) (not (kindIs "invalid" $size)) }}
{{- fail (printf (print "%s=%s is a number, not a quantity (--set types 100 as one): a size without its unit is bytes to Kubernetes; "
  "allowed: a quantity with its unit, e.g. --set %s=%sGi") $key
  (include "gpt-oss.scalarString" $size) $key (include "gpt-oss.scalarString" $size)) }}
{{- end }}
{{- end }}
{{- $createsClaim := and (not $mc.existingClaim) (index . (include "gpt-oss.object" (list "gpt-oss.modelSource" .))).pvc }}
{{- if and $createsClaim (eq .Values.model.id "openai/gpt-oss-120b") }}
{{- /* What the Job downloads: with source huggingface, every folder (gpt-oss.modelFiles) no ignore pattern matches;
  the other sources copy what tools/mirror-model.py wrote, the weights without original/ and metal/. */}}
{{- $patterns := ternary $mc.download.ignorePatterns (list "original/*" "metal/*") (eq $mc.source "huggingface") }}
{{- $gib := 0.0 }}
{{- $kept := list }}
{{- range get (include "gpt-oss.modelFiles" . | fromYaml) .Values.model.id }}
{{- $file := .file }}
{{- $skipped := false }}
{{- range $patterns }}{{ if include "gpt-oss.globMatch" (dict "pattern" (toString .) "name" $file) }}{{ $skipped = true }}{{ end }}{{ end }}
{{- if not $skipped }}
{{- $gib = addf $gib .gib }}
{{- $kept = append $kept (printf "%s %.1f GiB" .what (float64 .gib)) }}
{{- end }}
{{- end }}
{{- /* The vocabulary (~3.5 MB) fits in the rounding up to whole GiB. */}}
{{- $needGi := ceil $gib | int }}
{{- $sizeBytes := float64 (include "gpt-oss.quantityBytes" $mc.size) }}
{{- if lt $sizeBytes (float64 (include "gpt-oss.quantityBytes" (printf "%dGi" $needGi))) }}
{{- /* Rule: the PVC the chart creates holds openai/gpt-oss-120b's weights (60.8 GiB) and its vocabulary: 61Gi or more. */}}
{{- if eq (len $kept) 1 }}
{{- fail (printf (print "modelCache.size=%s cannot hold openai/gpt-oss-120b: its weights take ~65 GB (60.8 GiB, without "
  "original/ and metal/), plus the vocabulary, on the PVC the chart creates; allowed: modelCache.size 61Gi or more (200Gi "
  "by default), or a claim of your own in modelCache.existingClaim") $mc.size) }}
{{- end }}
{{- /* Rule: the PVC the chart creates holds every folder the ignore patterns let the download Job fetch. */}}
{{- fail (printf (print "modelCache.size=%s cannot hold what modelCache.download.ignorePatterns=%s downloads of openai/gpt-oss-120b: "
  "%.1f GiB, %.0f bytes (%s), plus the vocabulary, on the PVC the chart creates, so the download would fill it and fail; "
  "allowed: modelCache.size %dGi or more, modelCache.download.ignorePatterns that skip original/* and metal/* (the "
  "default), or a claim of your own in modelCache.existingClaim") $mc.size (toJson $patterns) $gib (mulf $gib 1073741824.0)
  (join ", " $kept) $needGi) }}
{{- end }}
{{- end }}
{{- /* /dev/shm is a memory-backed volume: its pages count against the pod's memory limit. */}}
{{- $pod := ternary (dict "key" "workers" "values" .Values.workers) (dict "key" "trtllmServe" "values" .Values.trtllmServe)
  (eq .Values.runtime "dynamo") }}
{{- $limit := dig "resources" "limits" "memory" "" $pod.values }}
{{- $limitBytes := include "gpt-oss.quantityBytes" $limit }}
{{- $shmBytes := include "gpt-oss.quantityBytes" $pod.values.sharedMemorySize }}
{{- /* Rule: GPUs per pod are the chart's (parallelism), never resources' (the chart's count would be overridden). */}}
{{- range $kind := list "requests" "limits" }}
{{- if hasKey (dig "resources" $kind dict $pod.values) "nvidia.com/gpu" }}
{{- $from := ternary "workers.<role>.tensorParallelSize x pipelineParallelSize" "trtllmServe.gpus" (eq $pod.key "workers") }}
{{- fail (printf (print "%s.resources.%s has nvidia.com/gpu, but the chart gives each pod the GPUs its parallelism needs (%s) "
  "and counts them in the plan, the node sums and the benchmark; remove it and set %s") $pod.key $kind $from $from) }}
{{- end }}
{{- end }}
{{- /* Rule: a pod's memory limit holds its /dev/shm (sharedMemorySize). */}}
{{- if and $limit $limitBytes $shmBytes (lt (float64 $limitBytes) (float64 $shmBytes)) }}
{{- fail (printf (print "%s.resources.limits.memory=%s cannot hold %s.sharedMemorySize=%s: /dev/shm is a memory-backed volume "
  "whose pages count against the pod's memory limit, so the pod would be OOM-killed before /dev/shm is full; allowed: "
  "%s.resources.limits.memory %s or more, or a smaller %s.sharedMemorySize")
  $pod.key (toString $limit) $pod.key $pod.values.sharedMemorySize $pod.key $pod.values.sharedMemorySize $pod.key) }}
{{- end }}
{{- end }}
