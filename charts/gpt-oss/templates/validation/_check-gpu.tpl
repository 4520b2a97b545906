{{- /* GPU rules: the node architecture and product label agree with gpu.type. */}}

{{/*
Hardware: gpu.nodeArch and gpu.productLabel, where set, agree with gpu.type (gpt-oss.gpuTypes). A product label
naming none of the known GPU families (a relabelled node) is the user's choice.
Usage: {{ include "gpt-oss.checkValues.gpu" . }}
*/}}
{{- define "gpt-oss.checkValues.gpu" -}}
{{- $gpu := .Values.gpu }}
{{- $type := get (include "gpt-oss.gpuTypes" . | fromYaml) $gpu.type }}
{{- if and (not (kindIs "invalid" $gpu.nodeArch)) (ne $gpu.nodeArch $type.nodeArch) }}
{{- /* Rule: GB200 nodes are ARM64 (Grace). */}}
{{- if eq $gpu.type "GB200" }}
{{- fail (printf "gpu.type=GB200 runs only on ARM64 (Grace) nodes, but gpu.nodeArch=%s; allowed: gpu.nodeArch=arm64" $gpu.nodeArch) }}
{{- end }}
{{- /* Rule: every other GPU type comes in AMD64 nodes. */}}
{{- fail (printf (print "gpu.type=%s comes in AMD64 (x86) nodes, but gpu.nodeArch=%s; "
  "allowed: gpu.nodeArch=amd64, or null to follow gpu.type") $gpu.type $gpu.nodeArch) }}
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
  $gpu.productLabel $named $gpu.type $gpu.type $type.productLabel) }}
{{- end }}
{{- end }}
{{- end }}
