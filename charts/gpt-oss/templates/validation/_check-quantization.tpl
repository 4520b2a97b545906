{{- /* Quantization rules (runtime dynamo): the GPU runs the quantization the workers override to. */}}

{{/*
Quantization (runtime dynamo): an override the GPU can run.
Usage: {{ include "gpt-oss.checkValues.quantization" . }}
*/}}
{{- define "gpt-oss.checkValues.quantization" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $gpu := index . (include "gpt-oss.object" (list "gpt-oss.gpuFacts" .)) }}
{{- $w := .Values.workers }}
{{- /* Rule: W4A8_MXFP4_MXFP8 runs on Blackwell only. */}}
{{- if and (eq $w.overrideQuantAlgo "W4A8_MXFP4_MXFP8") (not $gpu.blackwell) }}
{{- fail (printf (print "workers.overrideQuantAlgo=W4A8_MXFP4_MXFP8 needs Blackwell GPUs, but gpu.type=%s; allowed: gpu.type B200 "
  "or GB200, or workers.overrideQuantAlgo W4A16_MXFP4 (what Hopper runs) or empty") .Values.gpu.type) }}
{{- end }}
{{- end }}
{{- end }}
