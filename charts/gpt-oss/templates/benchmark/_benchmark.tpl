{{- /* Clients of the serving endpoint: the URL they use and the AIPerf command line. */}}

{{/*
URL the smoke test and the benchmark use: frontend.urlOverride, else the in-cluster Service of the
runtime (the Dynamo frontend or trtllm-serve).
Usage: {{ include "gpt-oss.clientUrl" . }}
*/}}
{{- define "gpt-oss.clientUrl" -}}
{{- $service := ternary (include "gpt-oss.trtllmServe.url" .) (include "gpt-oss.frontendUrl" .) (eq .Values.runtime "trtllm-serve") }}
{{- default $service .Values.frontend.urlOverride }}
{{- end }}

{{/*
Model name clients put in "model": model.id (Dynamo serves it under that name), or the name
trtllm-serve gives the local checkpoint.
Usage: {{ include "gpt-oss.servedModelName" . }}
*/}}
{{- define "gpt-oss.servedModelName" -}}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- include "gpt-oss.trtllmServe.servedModelName" . }}
{{- else }}
{{- .Values.model.id }}
{{- end }}
{{- end }}

{{/*
The flags gpt-oss.benchmarkCommand writes, each with the value that sets it: benchmark.extraArgs may not repeat one
(AIPerf would take the later, and the plan would state the other). tests/chart/benchmark/test_benchmark.py checks that every flag the
chart renders is listed.
Usage: {{ $owned := include "gpt-oss.benchmarkFlags" . | fromYaml }}
*/}}
{{- define "gpt-oss.benchmarkFlags" -}}
--model: model.id
--tokenizer: model.id (the model cache's path to it)
--endpoint-type: the chart (the chat endpoint)
--endpoint: the chart (the chat endpoint)
--streaming: the chart (the chat endpoint)
--url: frontend (the chart's client URL)
--synthetic-input-tokens-mean: benchmark.inputTokensMean
--synthetic-input-tokens-stddev: benchmark.inputTokensStddev
--output-tokens-mean: benchmark.outputTokensMean
--output-tokens-stddev: benchmark.outputTokensStddev
--extra-inputs: benchmark.extraInputs
--concurrency: benchmark.concurrency (the plan's, from the decode slots or per GPU)
--request-count: benchmark.requestCount (the plan's)
--warmup-request-count: benchmark.warmupRequestCount
--num-dataset-entries: benchmark.numDatasetEntries
--random-seed: benchmark.randomSeed
{{- end }}

{{/*
The AIPerf command line of the benchmark, every number final (from gpt-oss.plan).
Usage: {{ include "gpt-oss.benchmarkCommand" . | nindent 12 }}
*/}}
{{- define "gpt-oss.benchmarkCommand" -}}
{{- $plan := index . (include "gpt-oss.object" (list "gpt-oss.plan" .)) }}
{{- $bench := .Values.benchmark -}}
- aiperf
- profile
- --model
- {{ include "gpt-oss.servedModelName" . | quote }}
- --tokenizer
- {{ include "gpt-oss.modelPath" . | quote }}
- --endpoint-type
- chat
- --endpoint
- /v1/chat/completions
- --streaming
- --url
- {{ include "gpt-oss.clientUrl" . | quote }}
- --synthetic-input-tokens-mean
- {{ int $bench.inputTokensMean | quote }}
{{- if not (kindIs "invalid" $bench.inputTokensStddev) }}
- --synthetic-input-tokens-stddev
- {{ $bench.inputTokensStddev | toString | quote }}
{{- end }}
- --output-tokens-mean
- {{ int $bench.outputTokensMean | quote }}
{{- if not (kindIs "invalid" $bench.outputTokensStddev) }}
- --output-tokens-stddev
- {{ $bench.outputTokensStddev | toString | quote }}
{{- end }}
{{- range $bench.extraInputs }}
- --extra-inputs
- {{ . | quote }}
{{- end }}
- --concurrency
- {{ int $plan.benchmark.concurrency | quote }}
- --request-count
- {{ int $plan.benchmark.requestCount | quote }}
{{- if not (kindIs "invalid" $bench.warmupRequestCount) }}
- --warmup-request-count
- {{ int $bench.warmupRequestCount | quote }}
{{- end }}
{{- if not (kindIs "invalid" $bench.numDatasetEntries) }}
- --num-dataset-entries
- {{ int $bench.numDatasetEntries | quote }}
{{- end }}
{{- if not (kindIs "invalid" $bench.randomSeed) }}
- --random-seed
- {{ int $bench.randomSeed | quote }}
{{- end }}
{{- range $bench.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}
