{{- /* The plan's GPU facts: each GPU type's node and memory, the facts of gpu.type, and the node labels GPU pods select. */}}

{{/*
Facts per GPU type (FACTS.md): the node it comes in (CPU architecture, GPUs per node, the nvidia.com/gpu.product
label GPU feature discovery gives it), the memory software sees (MiB), Blackwell or not. The one table the
GPU-type defaults come from.
Usage: {{ $types := include "gpt-oss.gpuTypes" . | fromYaml }}
*/}}
{{- define "gpt-oss.gpuTypes" -}}
GB200: {nodeArch: arm64, perNode: 4, productLabel: NVIDIA-GB200, memoryMiB: 189471, blackwell: true}
B200: {nodeArch: amd64, perNode: 8, productLabel: NVIDIA-B200, memoryMiB: 183359, blackwell: true}
H200: {nodeArch: amd64, perNode: 8, productLabel: NVIDIA-H200, memoryMiB: 143771, blackwell: false}
H100: {nodeArch: amd64, perNode: 8, productLabel: NVIDIA-H100-80GB-HBM3, memoryMiB: 81559, blackwell: false}
{{- end }}

{{/*
The facts of gpu.type, with gpu.nodeArch, gpu.perNode and gpu.productLabel where the user sets them (null
follows gpu.type; gpt-oss.checkValues.gpu refuses a nodeArch or productLabel that contradicts it).
Usage: {{ $gpu := include "gpt-oss.gpuFacts" . | fromYaml }}
*/}}
{{- define "gpt-oss.gpuFacts" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeGpuFacts" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.gpuFacts, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeGpuFacts" . }} (templates read it through gpt-oss.gpuFacts)
*/}}
{{- define "gpt-oss.computeGpuFacts" -}}
{{- $facts := get (include "gpt-oss.gpuTypes" . | fromYaml) .Values.gpu.type }}
{{- range $key := list "nodeArch" "perNode" "productLabel" }}
{{- $value := index $.Values.gpu $key }}
{{- if not (kindIs "invalid" $value) }}
{{- $_ := set $facts $key $value }}
{{- end }}
{{- end }}
{{- $_ := set $facts "perNode" (int $facts.perNode) }}
{{- toYaml $facts }}
{{- end }}

{{/*
Node labels every GPU pod selects: kubernetes.io/arch, and nvidia.com/gpu.product unless the label is "".
Usage: {{ $selector := include "gpt-oss.gpuNodeSelector" . | fromYaml }}
*/}}
{{- define "gpt-oss.gpuNodeSelector" -}}
{{- $gpu := include "gpt-oss.gpuFacts" . | fromYaml }}
{{- $selector := dict "kubernetes.io/arch" $gpu.nodeArch }}
{{- with $gpu.productLabel }}
{{- $_ := set $selector "nvidia.com/gpu.product" . }}
{{- end }}
{{- toYaml $selector }}
{{- end }}
