{{- /* The Dynamo metric names of each release line: what the scalers, the dashboard and the alerts read. */}}

{{/*
The selected release line's (gpt-oss.dynamoLine) Dynamo series, as YAML:
  frontendActive: the gauge of requests the frontend is handling (the frontend scaler, the dashboard's in-flight line).
  frontendQueued: the requests waiting in the frontend (the GptOssRequestsQueuing alert, the dashboard's queue line):
    metric, extra matchers, and its labels besides namespace and pod (each pod counted once, over them); the 1.6
    line's is a sum over stages, dynamo_frontend_stage_requests carrying stage and phase but no model.
  workerActive: the gauge of requests in flight on a worker's endpoint (the worker scalers, the cost rules' pod count).
  workerComponents: the Dynamo component a dynamo.trtllm worker registers per mode, its series' dynamo_component
    (trtllm/args.py DEFAULT_ENDPOINT_COMPONENT / DEFAULT_PREFILL_COMPONENT: tensorrt_llm in 1.2.1, backend in 1.6.1).
1.2 line (ai-dynamo 1.2.1): dynamo_frontend_inflight_requests and dynamo_frontend_queued_requests. 1.6 line (1.6.1):
those are deprecated (metrics catalog: -> dynamo_frontend_active_requests, and the sum of
dynamo_frontend_stage_requests{stage=~"preprocess|route|dispatch"}); the 1.6.1 frontend serves both (tests/e2e). 1.7
line: the 1.6 line's series.
Usage: {{ $metrics := index . (include "gpt-oss.object" (list "gpt-oss.dynamoMetrics" .)) }}
*/}}
{{- define "gpt-oss.dynamoMetrics" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeDynamoMetrics" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.dynamoMetrics, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeDynamoMetrics" . }} (templates read it through gpt-oss.dynamoMetrics)
*/}}
{{- define "gpt-oss.computeDynamoMetrics" -}}
{{- $lines := dict
  "1.2" (dict
    "frontendActive" "dynamo_frontend_inflight_requests"
    "frontendQueued" (dict "metric" "dynamo_frontend_queued_requests" "matchers" "" "labels" "model")
    "workerActive" "dynamo_component_inflight_requests"
    "workerComponents" (dict "agg" "tensorrt_llm" "decode" "tensorrt_llm" "prefill" "prefill"))
  "1.6" (dict
    "frontendActive" "dynamo_frontend_active_requests"
    "frontendQueued" (dict "metric" "dynamo_frontend_stage_requests" "matchers" "stage=~\"preprocess|route|dispatch\"" "labels" "stage, phase")
    "workerActive" "dynamo_component_inflight_requests"
    "workerComponents" (dict "agg" "backend" "decode" "backend" "prefill" "prefill")) }}
{{- /* The 1.7 line's series are the 1.6 line's: every one of them is still defined in 1.7.0.dev (RELEASE-1.7-FACTS.md
section 4, seen live there). */}}
{{- $_ := set $lines "1.7" (get $lines "1.6") }}
{{- toJson (get $lines (include "gpt-oss.dynamoLine" .)) }}
{{- end }}

{{/*
The PromQL of the requests waiting in this release's frontends (gpt-oss.dynamoMetrics frontendQueued), each frontend
pod once (two scrape setups may scrape it): selector, the series' label matchers; model, a model matcher applied
where the line's series carry model.
Usage: {{ include "gpt-oss.frontendQueuedQuery" (dict "root" $ "selector" $series.frontend "model" "") }}
*/}}
{{- define "gpt-oss.frontendQueuedQuery" -}}
{{- $queued := (index .root (include "gpt-oss.object" (list "gpt-oss.dynamoMetrics" .root))).frontendQueued }}
{{- $matchers := compact (list .selector (ternary .model "" (contains "model" $queued.labels)) $queued.matchers) }}
{{- printf "sum(max by (namespace, pod, %s) (%s{%s}))" $queued.labels $queued.metric (join ", " $matchers) }}
{{- end }}
