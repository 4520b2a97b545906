{{- /* GPU rules: the node architecture and product label agree with gpu.type's record, whole GPUs only. */}}

{{/*
Hardware: gpu.nodeArch and gpu.productLabel, where set, agree with gpu.type's record (gpt-oss.gpuRecords): the
architecture of its nodes, one of the nvidia.com/gpu.product labels GPU Feature Discovery gives them (or "" to select
no product), never a MIG profile (<product>-MIG-<profile>, here or in a nodeSelector): gpt-oss needs whole GPUs.
Usage: {{ include "gpt-oss.checkValues.gpu" . }}
*/}}
{{- define "gpt-oss.checkValues.gpu" -}}
{{- $gpu := .Values.gpu }}
{{- $record := index . (include "gpt-oss.object" (list "gpt-oss.gpuRecord" .)) }}
{{- $labels := join ", " $record.productLabels }}
{{- if and (not (kindIs "invalid" $gpu.nodeArch)) (ne $gpu.nodeArch $record.nodeArch) }}
{{- /* Rule: GB200 nodes are ARM64 (Grace). */}}
{{- if eq $gpu.type "GB200" }}
{{- fail (printf "gpu.type=GB200 runs only on ARM64 (Grace) nodes, but gpu.nodeArch=%s; allowed: gpu.nodeArch=arm64" $gpu.nodeArch) }}
{{- end }}
{{- /* Rule: every other GPU type comes in AMD64 nodes. */}}
{{- fail (printf (print "gpu.type=%s comes in AMD64 (x86) nodes, but gpu.nodeArch=%s; "
  "allowed: gpu.nodeArch=amd64, or null to follow gpu.type") $gpu.type $gpu.nodeArch) }}
{{- end }}
{{- /* MIG instances, as GPU Feature Discovery labels a node whose GPUs are partitioned (MIG strategy single). */}}
{{- $selectors := list (dict "key" "gpu.productLabel" "value" (toString (default "" $gpu.productLabel))
  "instead" "\"\" to select no product, or null to follow gpu.type") }}
{{- range $owner := list "workers" "trtllmServe" }}
{{- $value := get (default dict (get $.Values $owner).nodeSelector) "nvidia.com/gpu.product" }}
{{- if $value }}
{{- $selectors = append $selectors (dict "key" (printf "%s.nodeSelector.nvidia.com/gpu.product" $owner) "value" (toString $value)
  "instead" (printf "or no nvidia.com/gpu.product in %s.nodeSelector (gpu.productLabel selects it)" $owner)) }}
{{- end }}
{{- end }}
{{- range $selectors }}
{{- /* Rule: no MIG profile: gpt-oss's weights need whole GPUs. */}}
{{- if regexMatch `(?i)-MIG-` .value }}
{{- fail (printf (print "%s=%s selects MIG instances (GPU Feature Discovery labels a node <product>-MIG-<profile> when its GPUs "
  "are partitioned), but gpt-oss needs whole GPUs: the chart gives each pod whole GPUs of gpu.type's memory and counts them "
  "per node; allowed: the label of whole %s GPUs (%s), %s") .key .value $gpu.type $labels .instead) }}
{{- end }}
{{- end }}
{{- if $gpu.productLabel }}
{{- $named := "" }}
{{- /* GB200 and GH200 before B200 and H200, whose names they contain. */}}
{{- range $family := list "GB200" "GH200" "B200" "H200" "H100" }}
{{- if and (not $named) (contains $family (upper $gpu.productLabel)) }}{{ $named = $family }}{{ end }}
{{- end }}
{{- /* Rule: a product label naming a known GPU family names gpu.type's. */}}
{{- if and $named (ne $named $gpu.type) }}
{{- fail (printf (print "gpu.productLabel=%s is the label of %s nodes, but gpu.type=%s; allowed: the nvidia.com/gpu.product "
  "label of %s nodes (%s by default), \"\" to select no product, or null to follow gpu.type")
  $gpu.productLabel $named $gpu.type $gpu.type (first $record.productLabels)) }}
{{- end }}
{{- /* Rule: the product label is one GPU Feature Discovery gives gpu.type's nodes. */}}
{{- if not (has $gpu.productLabel $record.productLabels) }}
{{- fail (printf (print "gpu.productLabel=%s is not a label GPU Feature Discovery gives %s nodes (gpu.type=%s; the chart's GPU "
  "record, gpt-oss.gpuRecords), so the workers would wait for nodes the chart has no facts for (memory, architecture, the MoE "
  "backends that run); allowed: %s, \"\" to select no product (nodes chosen by your own workers.nodeSelector), or null to "
  "follow gpu.type") $gpu.productLabel $gpu.type $gpu.type $labels) }}
{{- end }}
{{- end }}
{{- end }}
