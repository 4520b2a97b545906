{{- /* The plan's GPU facts: one record per GPU type the chart serves, the facts of gpu.type, and the node labels GPU pods select. */}}

{{/*
One record per GPU type the chart serves, the one table every GPU fact of the chart comes from:
  architecture, sm: Blackwell (SM 100: B200, GB200) or Hopper (SM 90: H100, H200) (FACTS.md line 34)
  nodeArch, perNode: the node it comes in (FACTS.md lines 51-52: GB200 on ARM64 nodes of 4, the others AMD64 nodes of 8)
  productLabels: the nvidia.com/gpu.product values GPU Feature Discovery gives its nodes (the NVML name, spaces made
    dashes), the first the default; the chart's targets since 0.2.0 (docs/releasing.md), the node profiles of
    ci/cluster/gpu-node-profiles.json. With MIG (strategy single) GFD labels <product>-MIG-<profile>: refused, since
    gpt-oss needs whole GPUs (gpt-oss.checkValues.hardware).
  memoryMiB: the memory software sees (FACTS.md line 22)
  trtllm: per TensorRT-LLM release the chart knows (the Dynamo lines' pins, gpt-oss.dynamoTrtllmPins, and the
    trtllm-serve key lists; "unlisted": a digest or a release without a record), the MoE backends
    (moe_config.backend) that run gpt-oss's MXFP4 MoE weights on it, each with the quantizations
    (OVERRIDE_QUANT_ALGO) it runs, and defaultMoeBackend, what an unset moe_config.backend takes.
    trtllm/RELEASES-FACTS.md lines 316-329 (the gpt_oss README's support table, not pinned to a release, and the
    1.4 deployment guide): Hopper runs W4A16 (BF16 activations) with TRITON or CUTLASS, TRTLLM is not listed and FP8
    activations are "not enabled" (also FACTS.md line 33); Blackwell runs W4A8_MXFP4_MXFP8 with CUTLASS or TRTLLM,
    W4A8_MXFP4_FP8 with CUTLASS, TRTLLM or TRITON ("experimental"), and W4A16_MXFP4 with TRTLLM only. AUTO exists from
    1.3.0rc14 on and is its default (line 69: "gained AUTO (new default; was CUTLASS)"); it picks TRTLLM on
    Blackwell and TRITON on Hopper in the 1.4 guide (line 312), a backend of the table before. Every other backend
    of the Literal (line 278: CUTEDSL, DEEPGEMM, DENSEGEMM, VANILLA, MARLIN, MEGAMOE_*) is not listed for gpt-oss.
Usage: {{ $records := index . (include "gpt-oss.object" (list "gpt-oss.gpuRecords" .)) }}
*/}}
{{- define "gpt-oss.gpuRecords" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeGpuRecords" .) }}
{{- end }}

{{/*
The table behind gpt-oss.gpuRecords, written once per render (gpt-oss.memo keeps its text: four renders' checks and
the plan read it).
Usage: {{ include "gpt-oss.computeGpuRecords" . }} (templates read it through gpt-oss.gpuRecords)
*/}}
{{- define "gpt-oss.computeGpuRecords" -}}
GB200:
  architecture: Blackwell
  sm: 100
  nodeArch: arm64
  perNode: 4
  productLabels: [NVIDIA-GB200]
  memoryMiB: 189471
  trtllm: &blackwell
    "1.2.0": &blackwell12
      defaultMoeBackend: CUTLASS
      moeBackends: &blackwellBackends
        CUTLASS: [W4A8_MXFP4_MXFP8, W4A8_MXFP4_FP8]
        TRTLLM: [W4A8_MXFP4_MXFP8, W4A8_MXFP4_FP8, W4A16_MXFP4]
        TRITON: [W4A8_MXFP4_FP8]
    "1.2.1": *blackwell12
    "1.3.0rc14": &blackwell13
      defaultMoeBackend: AUTO
      moeBackends:
        AUTO: [W4A8_MXFP4_MXFP8, W4A8_MXFP4_FP8, W4A16_MXFP4]
        CUTLASS: [W4A8_MXFP4_MXFP8, W4A8_MXFP4_FP8]
        TRTLLM: [W4A8_MXFP4_MXFP8, W4A8_MXFP4_FP8, W4A16_MXFP4]
        TRITON: [W4A8_MXFP4_FP8]
    "1.3.0rc19": *blackwell13
    "1.3.0rc22": *blackwell13
    "1.3.0rc25": *blackwell13
    "1.3.0rc29": *blackwell13
    "1.4.0rc2": *blackwell13
    unlisted: {defaultMoeBackend: "", moeBackends: *blackwellBackends}
B200:
  architecture: Blackwell
  sm: 100
  nodeArch: amd64
  perNode: 8
  productLabels: [NVIDIA-B200]
  memoryMiB: 183359
  trtllm: *blackwell
H200:
  architecture: Hopper
  sm: 90
  nodeArch: amd64
  perNode: 8
  productLabels: [NVIDIA-H200]
  memoryMiB: 143771
  trtllm: &hopper
    "1.2.0": &hopper12
      defaultMoeBackend: CUTLASS
      moeBackends: &hopperBackends
        TRITON: [W4A16_MXFP4]
        CUTLASS: [W4A16_MXFP4]
    "1.2.1": *hopper12
    "1.3.0rc14": &hopper13
      defaultMoeBackend: AUTO
      moeBackends:
        AUTO: [W4A16_MXFP4]
        TRITON: [W4A16_MXFP4]
        CUTLASS: [W4A16_MXFP4]
    "1.3.0rc19": *hopper13
    "1.3.0rc22": *hopper13
    "1.3.0rc25": *hopper13
    "1.3.0rc29": *hopper13
    "1.4.0rc2": *hopper13
    unlisted: {defaultMoeBackend: "", moeBackends: *hopperBackends}
H100:
  architecture: Hopper
  sm: 90
  nodeArch: amd64
  perNode: 8
  productLabels: [NVIDIA-H100-80GB-HBM3]
  memoryMiB: 81559
  trtllm: *hopper
{{- end }}

{{/*
The record of gpu.type (gpt-oss.gpuRecords), alone: the checks parse this one, a quarter of the table.
Usage: {{ $record := index . (include "gpt-oss.object" (list "gpt-oss.gpuRecord" .)) }}
*/}}
{{- define "gpt-oss.gpuRecord" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeGpuRecord" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.gpuRecord, run once per render (gpt-oss.memo keeps its text); {} for a type without
a record (the schema's enum refuses it first).
Usage: {{ include "gpt-oss.computeGpuRecord" . }} (templates read it through gpt-oss.gpuRecord)
*/}}
{{- define "gpt-oss.computeGpuRecord" -}}
{{- toJson (get (index . (include "gpt-oss.object" (list "gpt-oss.gpuRecords" .))) (toString .Values.gpu.type)) }}
{{- end }}

{{/*
Facts per GPU type in the shape the plan reads (from gpt-oss.gpuRecords): the node it comes in (CPU architecture,
GPUs per node, the default nvidia.com/gpu.product label), the memory software sees (MiB), Blackwell or not.
Usage: {{ $types := index . (include "gpt-oss.object" (list "gpt-oss.gpuTypes" .)) }}
*/}}
{{- define "gpt-oss.gpuTypes" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeGpuTypes" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.gpuTypes, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeGpuTypes" . }} (templates read it through gpt-oss.gpuTypes)
*/}}
{{- define "gpt-oss.computeGpuTypes" -}}
{{- $types := dict }}
{{- range $type, $r := index . (include "gpt-oss.object" (list "gpt-oss.gpuRecords" .)) }}
{{- $_ := set $types $type (dict "nodeArch" $r.nodeArch "perNode" (int $r.perNode) "productLabel" (first $r.productLabels)
  "memoryMiB" (int $r.memoryMiB) "blackwell" (eq $r.architecture "Blackwell")) }}
{{- end }}
{{- toJson $types }}
{{- end }}

{{/*
The facts of gpu.type, with gpu.nodeArch, gpu.perNode and gpu.productLabel where the user sets them (null
follows gpu.type; gpt-oss.checkValues.gpu refuses a nodeArch or productLabel that contradicts it).
Usage: {{ $gpu := index . (include "gpt-oss.object" (list "gpt-oss.gpuFacts" .)) }}
*/}}
{{- define "gpt-oss.gpuFacts" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeGpuFacts" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.gpuFacts, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeGpuFacts" . }} (templates read it through gpt-oss.gpuFacts)
*/}}
{{- define "gpt-oss.computeGpuFacts" -}}
{{- $facts := deepCopy (get (index . (include "gpt-oss.object" (list "gpt-oss.gpuTypes" .))) .Values.gpu.type) }}
{{- range $key := list "nodeArch" "perNode" "productLabel" }}
{{- $value := index $.Values.gpu $key }}
{{- if not (kindIs "invalid" $value) }}
{{- $_ := set $facts $key $value }}
{{- end }}
{{- end }}
{{- $_ := set $facts "perNode" (int $facts.perNode) }}
{{- toJson $facts }}
{{- end }}

{{/*
Node labels every GPU pod selects: kubernetes.io/arch, and nvidia.com/gpu.product unless the label is "".
Usage: {{ $selector := include "gpt-oss.gpuNodeSelector" . | fromJson }}
*/}}
{{- define "gpt-oss.gpuNodeSelector" -}}
{{- $gpu := index . (include "gpt-oss.object" (list "gpt-oss.gpuFacts" .)) }}
{{- $selector := dict "kubernetes.io/arch" $gpu.nodeArch }}
{{- with $gpu.productLabel }}
{{- $_ := set $selector "nvidia.com/gpu.product" . }}
{{- end }}
{{- toJson $selector }}
{{- end }}
