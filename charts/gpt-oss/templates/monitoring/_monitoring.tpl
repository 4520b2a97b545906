{{- /* Monitoring: which series this release's scalers, dashboard and alerts read, which scrape setups provide them, and the alerts. */}}

{{/*
The Dynamo component a role's TensorRT-LLM worker registers on the selected release line, the dynamo_component label
of its series (gpt-oss.dynamoMetrics workerComponents); mode: agg, prefill or decode.
Usage: {{ include "gpt-oss.workerComponentName" (dict "root" $ "mode" $row.mode) }}
*/}}
{{- define "gpt-oss.workerComponentName" -}}
{{- get (index .root (include "gpt-oss.object" (list "gpt-oss.dynamoMetrics" .root))).workerComponents .mode }}
{{- end }}

{{/*
PromQL label matchers of this release's series, by source, and the scrape setups that provide them:
  frontend: dynamo_namespace="<namespace>-<dgd>", a target label: the Dynamo platform's dynamo-frontend PodMonitor and
    this chart's frontend PodMonitor set it from the pod label nvidia.com/dynamo-namespace (the frontend's own series
    carry only model).
  workers: dynamo_namespace=~"<namespace>_<dgd>(_<hash>)?", the label the Dynamo runtime puts on its own series (the
    worker's DYN_NAMESPACE with - as _, plus the worker-hash suffix the operator gives the workers of a Deployment-backed
    DGD: get_worker_namespace, common/utils/namespace.py of the 1.2.1 wheel), so every scrape of the system port has it.
  workerPods: namespace and pod (the DGD's pods are named <dgd>-...), the target labels every prometheus-operator
    scrape sets: for the workers' KV-cache gauge, which dynamo.trtllm exports without dynamo_namespace (its
    DYNAMO_COMPONENT_REGISTRY gauges carry model, dynamo_component and dp_rank only).
  trtllmServe: namespace and pod, the target labels of this chart's trtllm-serve PodMonitor.
Usage: {{ $series := include "gpt-oss.seriesSelectors" . | fromYaml }}
*/}}
{{- define "gpt-oss.seriesSelectors" -}}
{{- $dynamoNamespace := include "gpt-oss.dynamoNamespace" . }}
frontend: {{ printf "dynamo_namespace=%q" $dynamoNamespace | quote }}
frontendScrape: the Dynamo platform's dynamo-frontend PodMonitor or monitoring.podMonitor (both add dynamo_namespace from the pod{{/*
  */}} label nvidia.com/dynamo-namespace)
workers: {{ printf "dynamo_namespace=~%q" (printf "%s(_[a-z0-9]+)?" ($dynamoNamespace | replace "-" "_")) | quote }}
workersScrape: any scrape of the workers' system port, e.g. the Dynamo platform's dynamo-worker PodMonitor or monitoring.podMonitor{{/*
  */}} (the series carry dynamo_namespace and dynamo_component themselves)
workerPods: {{ printf "namespace=%q,pod=~%q" .Release.Namespace (printf "%s-.+" (include "gpt-oss.fullname" .)) | quote }}
trtllmServe: {{ printf "namespace=%q,pod=~%q" .Release.Namespace (printf "%s-.+" (include "gpt-oss.trtllmServe.name" .)) | quote }}
trtllmServeScrape: monitoring.podMonitor (trtllm-serve's /prometheus/metrics with namespace and pod labels)
{{- end }}

{{/*
Whether the workers publish their engine metrics, and the flag that turns it on: dynamo.trtllm publishes KV events,
the forward-pass metrics the SLA planner's load scaling reads, and the KV-cache gauge
dynamo_component_gpu_cache_usage_percent only with it (1.2.1 wheel: trtllm/workers/llm_worker.py, publisher.py;
common/utils/prometheus.py). On under KV-aware routing with KV events, and whenever the planner runs.
  publishes: true or false; flag: --publish-events-and-metrics (Dynamo 1.2.x) or --publish-kv-events (1.3.0+)
Usage: {{ $publishing := include "gpt-oss.workerPublishing" . | fromYaml }}
*/}}
{{- define "gpt-oss.workerPublishing" -}}
{{- $kv := index . (include "gpt-oss.object" (list "gpt-oss.kvRouting" .)) }}
{{- $version := (index . (include "gpt-oss.object" (list "gpt-oss.dynamoRuntimeVersion" .))).version }}
{{- $publishes := and (eq .Values.runtime "dynamo") (or $kv.kvEvents .Values.planner.enabled) }}
publishes: {{ $publishes }}
flag: {{ ternary "--publish-kv-events" "--publish-events-and-metrics" (and (ne $version "") (semverCompare ">=1.3.0-0" $version)) }}
{{- end }}

{{/*
Worker arguments that turn on the workers' event and metric publishing (gpt-oss.workerPublishing).
Usage: {{ include "gpt-oss.workerPublishArgs" . }}
*/}}
{{- define "gpt-oss.workerPublishArgs" -}}
{{- $publishing := include "gpt-oss.workerPublishing" . | fromYaml }}
{{- if $publishing.publishes }}
- {{ $publishing.flag }}
{{- end }}
{{- end }}

{{/*
The TensorRT-LLM release of the trtllm-serve image, read from its tag, and whether it serves the queue and KV-cache
gauges the endpoint picker reads (trtllm_num_requests_waiting, trtllm_num_requests_running, trtllm_kv_cache_utilization):
TensorRT-LLM added them after 1.2 (PRs #11243, 2026-02-03, and #12545, 2026-03-25; tensorrt_llm/metrics/collector.py
of main @050f80de has them, the 1.2 collector the five request metrics only).
  version: 1.2.0 (empty for a digest or a custom tag; a tag pinned by digest, 1.3.0rc29@sha256:..., names its
    release); prerelease: the rc/dev/post part
  servesGauges: yes (a final 1.3.0 or newer, or a candidate of gpt-oss.trtllmGaugeCandidates), no (older than 1.3.0)
    or unknown (another 1.3.0 release candidate, a digest or a custom tag)
Usage: {{ $release := include "gpt-oss.trtllmServe.release" . | fromYaml }}
*/}}
{{- define "gpt-oss.trtllmServe.release" -}}
{{- $tag := toString .Values.trtllmServe.image.tag }}
{{- $named := regexReplaceAll `@sha256:[0-9a-f]+$` $tag "" }}
{{- $version := "" }}
{{- $prerelease := "" }}
{{- if regexMatch `^v?[0-9]+\.[0-9]+\.[0-9]+((rc|\.?post|\.?dev)[0-9]+)?$` $named }}
{{- $version = regexFind `[0-9]+\.[0-9]+\.[0-9]+` $named }}
{{- $prerelease = regexFind `(rc|\.?post|\.?dev)[0-9]+$` $named }}
{{- end }}
{{- $serves := "unknown" }}
{{- if $version }}
{{- if semverCompare "<1.3.0" $version }}
{{- $serves = "no" }}
{{- else if or (not $prerelease) (semverCompare ">1.3.0" $version) (has (printf "%s%s" $version $prerelease) (include "gpt-oss.trtllmGaugeCandidates"
  . | fromYamlArray)) }}
{{- $serves = "yes" }}
{{- end }}
{{- end }}
tag: {{ $tag | quote }}
version: {{ $version | quote }}
prerelease: {{ $prerelease | quote }}
servesGauges: {{ $serves | quote }}
{{- end }}

{{/*
The alert rules of the PrometheusRule, as a list of Prometheus rules (alert, expr, for, labels, annotations), from
monitoring.prometheusRule. Every expression counts each pod once (max by pod) however many scrape jobs read it.
Dynamo: TTFT and ITL p95 from the frontend's histograms, the frontend's queue, a frontend up while no worker that
serves the model reports in, the download Job, and KV-cache use where the workers publish it. trtllm-serve: TTFT and
time per output token p95 and its queue from trtllm-serve's histograms (named with or without the trtllm_ prefix,
which TensorRT-LLM added to its collector after the oldest releases), and the download Job.
Usage: {{ $rules := include "gpt-oss.alertRules" . | fromYamlArray }}
*/}}
{{- define "gpt-oss.alertRules" -}}
{{- $pr := .Values.monitoring.prometheusRule }}
{{- $series := include "gpt-oss.seriesSelectors" . | fromYaml }}
{{- $dynamo := eq .Values.runtime "dynamo" }}
{{- $name := ternary (include "gpt-oss.fullname" .) (include "gpt-oss.trtllmServe.name" .) $dynamo }}
{{- $ttft := divf (ternary .Values.planner.ttftMs $pr.ttftMs (kindIs "invalid" $pr.ttftMs)) 1000.0 }}
{{- $itl := divf (ternary .Values.planner.itlMs $pr.itlMs (kindIs "invalid" $pr.itlMs)) 1000.0 }}
{{- $rules := list }}
{{- $p95 := "" }}
{{- if $dynamo }}
{{- $p95 = printf "histogram_quantile(0.95, sum by (le) (max by (namespace, pod, model, le) (rate(%%s_bucket{%s}[5m]))))" $series.frontend }}
{{- else }}
{{- $p95 = printf "histogram_quantile(0.95, sum by (le) (max by (namespace, pod, le) (rate({__name__=~\"(trtllm_)?%%s_bucket\",%s}[5m]))))"
  $series.trtllmServe }}
{{- end }}
{{- $latency := list
  (dict "alert" "GptOssTTFTHigh" "metric" (ternary "dynamo_frontend_time_to_first_token_seconds" "time_to_first_token_seconds" $dynamo)
    "target" $ttft "what" "time to first token")
  (dict "alert" "GptOssITLHigh" "metric" (ternary "dynamo_frontend_inter_token_latency_seconds" "time_per_output_token_seconds" $dynamo)
    "target" $itl "what" (ternary "inter-token latency" "time per output token" $dynamo)) }}
{{- range $latency }}
{{- $rules = append $rules (dict "alert" .alert "expr" (printf "%s > %s" (printf $p95 .metric) (toString .target)) "summary"
  (printf "%s: p95 %s above %s s for {{ $for }}" $name .what (toString .target)) "description"
  (printf "p95 %s over 5 minutes is {{ $value | humanizeDuration }}, above the target of %s s." .what (toString .target))) }}
{{- end }}
{{- $queued := "" }}
{{- if $dynamo }}
{{- $queued = include "gpt-oss.frontendQueuedQuery" (dict "root" . "selector" $series.frontend "model" "") }}
{{- else }}
{{- $queued = printf "sum(max by (namespace, pod) (rate({__name__=~\"(trtllm_)?request_queue_time_seconds_sum\",%s}[1m])))" $series.trtllmServe }}
{{- end }}
{{- $rules = append $rules (dict "alert" "GptOssRequestsQueuing" "expr" (printf "%s > %d" $queued (int $pr.queuedRequests)) "summary"
  (printf "%s: more than %d requests waiting" $name (int $pr.queuedRequests)) "description"
  (printf "{{ $value }} requests are waiting %s, more than %d, for {{ $for }}: the workers are saturated."
  (ternary "for their first token" "in trtllm-serve's queue" $dynamo) (int $pr.queuedRequests))) }}
{{- if $dynamo }}
{{- $component := include "gpt-oss.workerComponentName" (dict "root" . "mode" "agg") }}
{{- $workers := printf "%s{%s,dynamo_component=%q,dynamo_endpoint=\"generate\"}"
  (index . (include "gpt-oss.object" (list "gpt-oss.dynamoMetrics" .))).workerActive $series.workers $component }}
{{- $rules = append $rules (dict "alert" "GptOssNoModelServed" "expr"
  (printf "count(max by (namespace, pod) (up{%s}) == 1) > 0 unless on () count(max by (namespace, pod) (%s)) > 0" $series.frontend $workers) "summary"
  (printf "%s: the frontend is up but serves no model" $name) "description"
  (printf (print "A frontend of %s answers, but no worker that serves %s (Dynamo component %s) reports in: "
  "/v1/models is empty and every request fails.") $name .Values.model.id $component)) }}
{{- end }}
{{- if .Values.modelCache.download.enabled }}
{{- $job := include "gpt-oss.downloadJobName" . }}
{{- $rules = append $rules (dict "alert" "GptOssModelDownloadFailed" "expr"
  (printf "max(kube_job_status_failed{namespace=%q,job_name=%q}) > 0" .Release.Namespace $job) "summary"
  (printf "%s: the model download Job %s failed" $name $job) "description"
  (printf "Job %s/%s has a failed pod; the workers wait for the model until it succeeds (kubectl logs -n %s job/%s)." .Release.Namespace $job
  .Release.Namespace $job)) }}
{{- end }}
{{- $publishing := include "gpt-oss.workerPublishing" . | fromYaml }}
{{- if and $dynamo $publishing.publishes }}
{{- $rules = append $rules (dict "alert" "GptOssKVCacheNearFull" "expr"
  (printf "max by (namespace, pod, dp_rank) (dynamo_component_gpu_cache_usage_percent{%s}) > %s" $series.workerPods (toString $pr.kvCacheUsage))
  "summary" (printf "%s: a worker's KV cache is more than %s full" $name (toString $pr.kvCacheUsage)) "description"
  "Worker {{ $labels.pod }} (rank {{ $labels.dp_rank }}) uses {{ $value | humanizePercentage }} of its KV cache: new requests queue or are evicted.") }}
{{- end }}
{{- $out := list }}
{{- range $rule := $rules }}
{{- $settings := get $pr.alerts $rule.alert }}
{{- if $settings.enabled }}
{{- $out = append $out (dict "alert" $rule.alert "expr" $rule.expr "for" $settings.for "labels" (dict "severity" $settings.severity) "annotations"
  (dict "summary" (replace "{{ $for }}" $settings.for $rule.summary) "description" (replace "{{ $for }}" $settings.for $rule.description) "runbook"
  (printf "docs/monitoring.md#%s" (lower $rule.alert)))) }}
{{- end }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/*
What a token costs (monitoring.cost, runtime dynamo): recording rules per role of the plan and for all roles, and the
GptOssTokenCostHigh alert, as a list of Prometheus rules. Over the window w (monitoring.cost.window, W seconds) and
with the price P of one gpu.type GPU-hour (monitoring.cost.gpuHourPrice):
  gpt_oss:role_gpus = pods of the role reporting in (its workers' generate endpoint, each pod once) x GPUs per pod
  gpt_oss:cost_per_million_output_tokens = gpt_oss:role_gpus x P x W / 3600 / output tokens finished in w x 1000000
  gpt_oss:cost_per_request = gpt_oss:role_gpus x P x W / 3600 / requests that succeeded in w
each labelled namespace, deployment, role (the plan's role key, or all) and window. Tokens and requests in w are the
frontends' counters' rise within it (max_over_time - min_over_time, each frontend pod once): exact while no counter
restarts inside the window (a frontend container restarted in place under-counts until the window has passed); a
window without tokens or requests gives no value rather than an infinite cost.
Usage: {{ $rules := include "gpt-oss.costRules" . | fromYamlArray }}
*/}}
{{- define "gpt-oss.costRules" -}}
{{- $cost := .Values.monitoring.cost }}
{{- $plan := index . (include "gpt-oss.object" (list "gpt-oss.plan" .)) }}
{{- $series := include "gpt-oss.seriesSelectors" . | fromYaml }}
{{- $metrics := index . (include "gpt-oss.object" (list "gpt-oss.dynamoMetrics" .)) }}
{{- $price := get $cost.gpuHourPrice .Values.gpu.type }}
{{- $amount := regexFind "[0-9]+" $cost.window | int }}
{{- $unit := regexFind "[smh]$" $cost.window }}
{{- $seconds := mul $amount (get (dict "s" 1 "m" 60 "h" 3600) $unit) }}
{{- $labels := dict "namespace" .Release.Namespace "deployment" (include "gpt-oss.fullname" .) "window" $cost.window }}
{{- $tokens := printf (print "sum(max by (namespace, pod, model) (max_over_time(dynamo_frontend_output_tokens_total{%s}[%s]) - "
  "min_over_time(dynamo_frontend_output_tokens_total{%s}[%s])))") $series.frontend $cost.window $series.frontend $cost.window }}
{{- $requests := printf (print "sum(max by (namespace, pod, model, endpoint, request_type) "
  "(max_over_time(dynamo_frontend_requests_total{%s,status=\"success\"}[%s]) - "
  "min_over_time(dynamo_frontend_requests_total{%s,status=\"success\"}[%s])))") $series.frontend $cost.window $series.frontend $cost.window }}
{{- $rules := list }}
{{- $all := list }}
{{- range $plan.roles }}
{{- $pods := printf "count(max by (namespace, pod) (%s{%s,dynamo_component=\"%s\",dynamo_endpoint=\"generate\"}))" $metrics.workerActive
  $series.workers (include "gpt-oss.workerComponentName" (dict "root" $ "mode" .mode)) }}
{{- $gpus := printf "(%s or vector(0)) * %d" $pods (int .gpusPerReplica) }}
{{- $all = append $all $gpus }}
{{- $rules = append $rules (dict "key" .key "gpus" $gpus) }}
{{- end }}
{{- $rules = append $rules (dict "key" "all" "gpus" (join " + " $all)) }}
{{- $out := list }}
{{- range $rules }}
{{- $roleLabels := merge (dict "role" .key) $labels }}
{{- $spend := printf "(%s) * %v * %d / 3600" .gpus $price $seconds }}
{{- $out = append $out (dict "record" "gpt_oss:role_gpus" "expr" .gpus "labels" $roleLabels) }}
{{- $out = append $out (dict "record" "gpt_oss:cost_per_million_output_tokens" "expr" (printf "%s / (%s > 0) * 1000000" $spend $tokens) "labels" $roleLabels) }}
{{- $out = append $out (dict "record" "gpt_oss:cost_per_request" "expr" (printf "%s / (%s > 0)" $spend $requests) "labels" $roleLabels) }}
{{- end }}
{{- $alert := get .Values.monitoring.prometheusRule.alerts "GptOssTokenCostHigh" }}
{{- if and $alert.enabled (not (kindIs "invalid" $cost.maxCostPerMillionTokens)) }}
{{- $bound := $cost.maxCostPerMillionTokens }}
{{- $name := include "gpt-oss.fullname" . }}
{{- $out = append $out (dict "alert" "GptOssTokenCostHigh" "expr"
  (printf "gpt_oss:cost_per_million_output_tokens{namespace=%q,deployment=%q,role=\"all\"} > %v" .Release.Namespace $name $bound) "for" $alert.for
  "labels" (dict "severity" $alert.severity) "annotations"
  (dict "summary" (printf "%s: output tokens cost more than %v per million" $name $bound) "description"
  (printf (print "Over the last %s the GPUs of %s cost {{ $value | printf \"%%.2f\" }} per million output tokens, "
  "above monitoring.cost.maxCostPerMillionTokens=%v, for %s: the GPUs are underused (look at the " "throughput panels) or the price changed.")
  $cost.window $name $bound $alert.for) "runbook" "docs/monitoring.md#gptosstokencosthigh")) }}
{{- end }}
{{- toYaml $out }}
{{- end }}
