{{- /* Autoscaling: which roles scale, their replica range, and the KEDA ScaledObjects and HPAs that do it. */}}

{{/*
The Dynamo namespace of this release's DGD (<namespace>-<dgd name>, dots made dashes, as the operator
computes it): the dynamo_namespace label of its metrics.
Usage: {{ include "gpt-oss.dynamoNamespace" . }}
*/}}
{{- define "gpt-oss.dynamoNamespace" -}}
{{- printf "%s-%s" .Release.Namespace (include "gpt-oss.fullname" . | replace "." "-") }}
{{- end }}

{{/*
Name of the scaling adapter the operator creates for a DGD component: <dgd>-<lowercase component>.
Usage: {{ include "gpt-oss.adapterName" (dict "root" $ "component" "TRTLLMDecodeWorker") }}
*/}}
{{- define "gpt-oss.adapterName" -}}
{{- printf "%s-%s" (include "gpt-oss.fullname" .root) (lower .component) }}
{{- end }}

{{/*
Who owns each scalable role's replica count, as a map by role key (frontend, worker, prefill, decode,
server): {scaledBy: "" | keda | hpa | planner, minReplicas, maxReplicas, replicas, adapter, fields, keptFromAdapter}.
replicas is what the chart writes: the values' count, or for a role an autoscaler or the planner owns,
the live DGD's count (kept on upgrade) or else the values' count clamped into [minReplicas, maxReplicas]; for a role
whose scaling is turned off while its live component still has a scaling adapter, the live count (keptFromAdapter).
fields: the DGD component fields that turn the role's scaling adapter on (scalingAdapter: {}).
Usage: {{ $owners := index . (include "gpt-oss.object" (list "gpt-oss.replicaOwners" .)) }}
*/}}
{{- define "gpt-oss.replicaOwners" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeReplicaOwners" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.replicaOwners, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeReplicaOwners" . }} (templates read it through gpt-oss.replicaOwners)
*/}}
{{- define "gpt-oss.computeReplicaOwners" -}}
{{- $owners := dict }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $t := .Values.trtllmServe }}
{{- $a := $t.autoscaling }}
{{- $entry := dict "scaledBy" "" "minReplicas" (int $t.replicas) "maxReplicas" (int $t.replicas) "replicas" (int $t.replicas) "adapter" "" "fields" dict }}
{{- if $a.enabled }}
{{- $_ := set $entry "scaledBy" $a.scaler }}
{{- $_ = set $entry "minReplicas" (int $a.minReplicas) }}
{{- $_ = set $entry "maxReplicas" (int $a.maxReplicas) }}
{{- $_ = set $entry "replicas" (min (max (int $t.replicas) (int $a.minReplicas)) (int $a.maxReplicas)) }}
{{- end }}
{{- $_ := set $owners "server" $entry }}
{{- else }}
{{- $live := include "gpt-oss.liveDGD" . | fromJson }}
{{- $rows := prepend (include "gpt-oss.roleTable" . | fromJsonArray) (dict "key" "frontend" "component" "Frontend" "mode" "frontend") }}
{{- range $row := $rows }}
{{- $role := ternary $.Values.frontend (get $.Values.workers $row.key) (eq $row.key "frontend") }}
{{- $a := $role.autoscaling }}
{{- $replicas := int $role.replicas }}
{{- $entry := dict "scaledBy" "" "minReplicas" $replicas "maxReplicas" $replicas "replicas" $replicas "adapter"
  (include "gpt-oss.adapterName" (dict "root" $ "component" $row.component)) "fields" dict }}
{{- if $a.enabled }}
{{- $_ := set $entry "scaledBy" $a.scaler }}
{{- $_ = set $entry "minReplicas" (int $a.minReplicas) }}
{{- $_ = set $entry "maxReplicas" (int $a.maxReplicas) }}
{{- else if and $.Values.planner.enabled (ne $row.key "frontend") }}
{{- $_ := set $entry "scaledBy" "planner" }}
{{- $_ = set $entry "minReplicas" (int $.Values.planner.minEndpoint) }}
{{- $_ = set $entry "maxReplicas" 0 }}
{{- end }}
{{- if $entry.scaledBy }}
{{- $_ := set $entry "fields" (dict "scalingAdapter" dict) }}
{{- $liveReplicas := "" }}
{{- range (dig "spec" "components" list $live) }}{{ if eq .name $row.component }}{{ $liveReplicas = .replicas }}{{ end }}{{ end }}
{{- if kindIs "invalid" $liveReplicas }}{{ $liveReplicas = "" }}{{ end }}
{{- if ne (toString $liveReplicas) "" }}
{{- $_ = set $entry "replicas" (int $liveReplicas) }}
{{- else if gt (int $entry.maxReplicas) 0 }}
{{- $_ = set $entry "replicas" (min (max $replicas (int $entry.minReplicas)) (int $entry.maxReplicas)) }}
{{- else }}
{{- $_ = set $entry "replicas" (max $replicas (int $entry.minReplicas)) }}
{{- end }}
{{- else }}
{{- /* Autoscaling turned off while the live component still has its adapter: the operator refuses any other count in
  this upgrade ("replicas: Forbidden: cannot be modified directly when scaling adapter is enabled") and its field
  manager owns the count, so the live one is kept (keptFromAdapter; docs/operations.md says how to change it next). */}}
{{- range (dig "spec" "components" list $live) }}
{{- if and (eq .name $row.component) (hasKey . "scalingAdapter") (not (kindIs "invalid" .replicas)) }}
{{- $_ := set $entry "replicas" (int .replicas) }}
{{- $_ = set $entry "keptFromAdapter" true }}
{{- end }}
{{- end }}
{{- end }}
{{- $_ := set $owners $row.key $entry }}
{{- end }}
{{- end }}
{{- toJson $owners }}
{{- end }}

{{/*
The scalers to render, one per autoscaled role: name, kind (ScaledObject or HorizontalPodAutoscaler), its target,
replica range, GPUs at both ends, the metric it reads, the PromQL that reads it (query: the KEDA trigger's, or what
prometheus-adapter answers the HPA with under docs/monitoring.md's rules), the scrape setups that provide it, and the
whole KEDA trigger or HPA metric. Default signal of each role, one that more replicas of that role relieve
(docs/monitoring.md): the frontend, requests in flight per frontend (the line's frontendActive, gpt-oss.dynamoMetrics;
threshold null: the benchmark concurrency); a worker role, requests in flight on its workers' generate endpoint
(workerActive of its Dynamo component; threshold null: its decode slots per replica);
trtllm-serve, requests waiting in its queue (gpt-oss.trtllmServe.queueSignal: the gauge where its release serves it,
else the one queue signal TensorRT-LLM 1.2 serves). Every query counts each pod once (max by pod): with the platform's and
this chart's PodMonitors both on, a pod is scraped twice.
Usage: {{ range include "gpt-oss.autoscalers" . | fromJsonArray }}
*/}}
{{- define "gpt-oss.autoscalers" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeAutoscalers" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.autoscalers, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeAutoscalers" . }} (templates read it through gpt-oss.autoscalers)
*/}}
{{- define "gpt-oss.computeAutoscalers" -}}
{{- $plan := index . (include "gpt-oss.object" (list "gpt-oss.plan" .)) }}
{{- $series := include "gpt-oss.seriesSelectors" . | fromYaml }}
{{- $metrics := index . (include "gpt-oss.object" (list "gpt-oss.dynamoMetrics" .)) }}
{{- $fullname := include "gpt-oss.fullname" . }}
{{- $scalers := list }}
{{- $rows := list }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $server := index $plan.roles 0 }}
{{- $rows = list (dict "key" "server" "valuesKey" "trtllmServe" "name" (include "gpt-oss.trtllmServe.name" .) "autoscaling"
  .Values.trtllmServe.autoscaling "gpusPerReplica" (int $server.gpusPerReplica) "target"
  (dict "apiVersion" "apps/v1" "kind" "Deployment" "name" (include "gpt-oss.trtllmServe.name" .))) }}
{{- else }}
{{- $rows = list (dict "key" "frontend" "valuesKey" "frontend" "name" (printf "%s-frontend" $fullname) "autoscaling" .Values.frontend.autoscaling
  "gpusPerReplica" 0 "defaultThreshold" (int $plan.benchmark.concurrency) "target"
  (dict "apiVersion" "nvidia.com/v1alpha1" "kind" "DynamoGraphDeploymentScalingAdapter" "name" $plan.frontend.adapter)) }}
{{- range $plan.roles }}
{{- $rows = append $rows (dict "key" .key "mode" .mode "valuesKey" .valuesKey "name" (printf "%s-%s" $fullname .key) "autoscaling"
  (get $.Values.workers .key).autoscaling "gpusPerReplica" (int .gpusPerReplica) "defaultThreshold" (int .slotsPerReplica)
  "target" (dict "apiVersion" "nvidia.com/v1alpha1" "kind" "DynamoGraphDeploymentScalingAdapter" "name" .adapter)) }}
{{- end }}
{{- end }}
{{- range $row := $rows }}
{{- $a := $row.autoscaling }}
{{- if $a.enabled }}
{{- $metric := "" }}
{{- $query := "" }}
{{- $adapterQuery := "" }}
{{- $selector := dict }}
{{- $scrape := "" }}
{{- $dedup := "max by (namespace, pod, worker_id, model)" }}
{{- if eq $row.key "server" }}
{{- $signal := include "gpt-oss.trtllmServe.queueSignal" (dict "root" $ "selector" $series.trtllmServe) | fromYaml }}
{{- $metric = $signal.metric }}
{{- $query = $signal.query }}
{{- $adapterQuery = $signal.adapterQuery }}
{{- $scrape = $series.trtllmServeScrape }}
{{- else if eq $row.key "frontend" }}
{{- $metric = $metrics.frontendActive }}
{{- $query = printf "sum(%s (%s{%s}))" $dedup $metric $series.frontend }}
{{- $selector = dict "dynamo_namespace" (include "gpt-oss.dynamoNamespace" $) }}
{{- $scrape = $series.frontendScrape }}
{{- else }}
{{- $component := include "gpt-oss.workerComponentName" (dict "root" $ "mode" $row.mode) }}
{{- $metric = $metrics.workerActive }}
{{- $query = printf "sum(%s (%s{%s,dynamo_component=%q,dynamo_endpoint=\"generate\"}))" $dedup $metric $series.workers $component }}
{{- $selector = dict "dynamo_component" $component "dynamo_endpoint" "generate" }}
{{- $scrape = $series.workersScrape }}
{{- end }}
{{- if not $adapterQuery }}
{{- $matchers := list (printf "namespace=%q" $.Release.Namespace) }}
{{- range $k := keys $selector | sortAlpha }}{{ $matchers = append $matchers (printf "%s=%q" $k (get $selector $k)) }}{{ end }}
{{- $adapterQuery = printf "sum(%s (%s{%s}))" $dedup $metric (join "," $matchers) }}
{{- end }}
{{- $threshold := include "gpt-oss.scalarString" (ternary $row.defaultThreshold $a.threshold (kindIs "invalid" $a.threshold)) }}
{{- $scaler := dict "name" $row.name "key" $row.key "valuesKey" $row.valuesKey "scaler" $a.scaler "target" $row.target "minReplicas"
  (int $a.minReplicas) "maxReplicas" (int $a.maxReplicas) "gpusAtMin" (mul $row.gpusPerReplica (int $a.minReplicas)) "gpusAtMax"
  (mul $row.gpusPerReplica (int $a.maxReplicas)) "threshold" $threshold "scrape" $scrape }}
{{- if eq $a.scaler "keda" }}
{{- $trigger := $a.trigger }}
{{- if not $trigger }}
{{- $trigger = dict "type" "prometheus" "metadata" (dict "serverAddress" $a.prometheusAddress "query" $query "threshold" $threshold) }}
{{- end }}
{{- $_ := set $scaler "kind" "ScaledObject" }}
{{- $_ = set $scaler "query" (ternary $query "" (not $a.trigger)) }}
{{- $_ = set $scaler "metric" (ternary (printf "%s, %s per replica" $query $threshold) (printf "custom %s trigger" ($trigger.type | default "?"))
  (not $a.trigger)) }}
{{- $_ = set $scaler "pollingInterval" (int $a.pollingInterval) }}
{{- $_ = set $scaler "cooldownPeriod" (int $a.cooldownPeriod) }}
{{- $_ = set $scaler "trigger" $trigger }}
{{- else }}
{{- $hpaMetric := $a.metric }}
{{- if not $hpaMetric }}
{{- /* The API server stores quantities canonically (0.7 as 700m): write that form, so Argo CD sees no diff. */}}
{{- $quantity := $threshold }}
{{- if contains "." $quantity }}
{{- $quantity = printf "%dm" (int (round (mulf (float64 $quantity) 1000) 0)) }}
{{- end }}
{{- $external := dict "metric" (dict "name" $metric) "target" (dict "type" "AverageValue" "averageValue" $quantity) }}
{{- if $selector }}
{{- $_ := set $external.metric "selector" (dict "matchLabels" $selector) }}
{{- end }}
{{- $hpaMetric = dict "type" "External" "external" $external }}
{{- end }}
{{- $_ := set $scaler "kind" "HorizontalPodAutoscaler" }}
{{- $_ = set $scaler "query" (ternary $adapterQuery "" (not $a.metric)) }}
{{- $_ = set $scaler "metric" (ternary (printf "External %s%s, %s per replica" $metric (toJson $selector) $threshold)
  (printf "custom %s metric" ($hpaMetric.type | default "?")) (not $a.metric)) }}
{{- $_ = set $scaler "hpaMetric" $hpaMetric }}
{{- end }}
{{- $_ := set $scaler "behavior" $a.behavior }}
{{- $scalers = append $scalers $scaler }}
{{- end }}
{{- end }}
{{- toJson $scalers }}
{{- end }}

{{/*
Warnings about the autoscalers that render and run, but badly: KEDA and an HPA in one release. KEDA's metrics
server and prometheus-adapter both serve the external metrics API, and a cluster has one
v1beta1.external.metrics.k8s.io APIService, so one of the two kinds reads no metric (Dynamo's autoscaling guide).
Returns a YAML list of sentences (gpt-oss.warnings adds them).
Usage: {{ range include "gpt-oss.autoscalingWarnings" . | fromYamlArray }}
*/}}
{{- define "gpt-oss.autoscalingWarnings" -}}
{{- $byScaler := dict "keda" list "hpa" list }}
{{- range include "gpt-oss.autoscalers" . | fromJsonArray }}
{{- $_ := set $byScaler .scaler (append (get $byScaler .scaler) .valuesKey) }}
{{- end }}
{{- $warnings := list }}
{{- if and $byScaler.keda $byScaler.hpa }}
{{- $warnings = append $warnings
  (printf (print "mixed autoscalers: KEDA for %s, an HPA for %s; KEDA's metrics server and prometheus-adapter both "
  "serve the external metrics API, and a cluster has one (v1beta1.external.metrics.k8s.io), so one kind "
  "will read no metric: set every autoscaling.scaler to keda, or every one to hpa") (join ", " $byScaler.keda) (join ", " $byScaler.hpa)) }}
{{- end }}
{{- range $key, $owner := index . (include "gpt-oss.object" (list "gpt-oss.replicaOwners" .)) }}
{{- if $owner.keptFromAdapter }}
{{- $where := ternary "frontend" (printf "workers.%s" $key) (eq $key "frontend") }}
{{- $warnings = append $warnings
  (printf (print "%s: scaling turned off while its scaling adapter still owns the count, so this upgrade keeps the live "
  "%d replicas (the operator refuses another count until the adapter is gone, and its field manager owns the field); "
  "to set %s.replicas, run the next helm upgrade with --force-conflicts (docs/operations.md, \"Autoscaling off\")")
  $where (int $owner.replicas) $where) }}
{{- end }}
{{- end }}
{{- toYaml $warnings }}
{{- end }}
