{{- /* Monitoring rules (issue 24): each scaler, the planner and the endpoint picker read metrics the release serves. */}}

{{/*
Rules of what the scalers, the planner and the endpoint picker read (issue 24): each reads only metrics the
configured release serves, and the planner only runs when it can decide; a PodMonitor's scrapeTimeout within its
interval (issue 53); and where the dashboard may be written (issue 55): the release namespace, or one
monitoring.dashboard.allowedNamespaces names, never a kube-* one.
Usage: {{ include "gpt-oss.checkValues.monitoring" . }}
*/}}
{{- define "gpt-oss.checkValues.monitoring" -}}
{{- $pm := .Values.monitoring.podMonitor }}
{{- $millis := dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000 }}
{{- $interval := mul (atoi (regexFind "^[0-9]+" $pm.interval)) (get $millis (regexFind "[a-z]+$" $pm.interval)) }}
{{- $timeout := mul (atoi (regexFind "^[0-9]+" $pm.scrapeTimeout)) (get $millis (regexFind "[a-z]+$" $pm.scrapeTimeout)) }}
{{- /* Rule: a scrape times out within its interval (Prometheus refuses the scrape config otherwise). */}}
{{- if gt $timeout $interval }}
{{- fail (printf (print "monitoring.podMonitor.scrapeTimeout=%s is longer than monitoring.podMonitor.interval=%s: Prometheus "
  "refuses a scrape config whose timeout exceeds its interval (\"scrape timeout greater than scrape interval\"), and drops "
  "the PodMonitor's targets; allowed: a scrapeTimeout at most the interval (%s)") $pm.scrapeTimeout $pm.interval $pm.interval) }}
{{- end }}
{{- $pl := .Values.planner }}
{{- if and $pl.enabled (eq .Values.runtime "dynamo") }}
{{- $version := include "gpt-oss.planner.version" . }}
{{- /* Rule: aiconfigurator interpolation needs a planner of Dynamo 1.3.0 or newer. */}}
{{- if and $pl.aicInterpolation.enabled $version (semverCompare "<1.3.0-0" $version) }}
{{- fail (printf (print "planner.aicInterpolation.enabled=true, but the planner is Dynamo %s (planner.image.tag, else the "
  "runtime's version): its aiconfigurator wrapper passes get_model the backend object where every aiconfigurator release (0.8.0 "
  "to 0.12.0) takes the backend's name, so the sweep fails at start (\"'TRTLLMBackend' object cannot be converted to "
  "'PyString'\", then \"Failed to obtain pre-deployment performance data\"); set planner.aicInterpolation.enabled=false, or a "
  "planner image of Dynamo 1.3.0 or newer") $version) }}
{{- end }}
{{- /* Rule: throughput scaling needs pre-deployment performance, which only aiconfigurator interpolation gives here. */}}
{{- if and (eq $pl.optimizationTarget "sla") $pl.throughputScaling (not $pl.aicInterpolation.enabled) }}
{{- fail (print "planner.throughputScaling=true needs the engines' pre-deployment performance, and this deployment has none: "
  "dynamo.trtllm serves no get_perf_metrics endpoint (Dynamo 1.2.1 turns that self-benchmark on for vLLM workers only), "
  "planner.aicInterpolation.enabled=false, and the chart mounts no profile_results_dir, so the planner stops at start "
  "(\"Failed to obtain pre-deployment performance data\"); set planner.throughputScaling=false (load scaling decides from the "
  "workers' forward-pass metrics), or planner.aicInterpolation.enabled=true with a planner of Dynamo 1.3.0 or newer") }}
{{- end }}
{{- /* Only load scaling decides (another optimizationTarget forces it on and throughput scaling off). */}}
{{- $loadOnly := or (ne $pl.optimizationTarget "sla") (not $pl.throughputScaling) }}
{{- $runtime := (index . (include "gpt-oss.object" (list "gpt-oss.dynamoRuntimeVersion" .))).version }}
{{- if and $loadOnly $runtime (semverCompare "<1.3.0-0" $runtime) }}
{{- range $key := list "worker" "prefill" "decode" }}
{{- $role := get $.Values.workers $key }}
{{- /* Rule: load scaling needs forward-pass metrics, which dynamo.trtllm 1.2.1 does not publish under attention DP. */}}
{{- if and $role.enabled $role.attentionDP (gt (int $role.tensorParallelSize) 1) }}
{{- fail (printf (print "planner.enabled=true: the planner's load scaling decides from the forward-pass metrics the workers "
  "publish, and dynamo.trtllm 1.2.1 publishes none under attention DP (publisher.py: \"FPM publisher disabled under "
  "attention-DP\"), but workers.%s.attentionDP=true, so the planner would never scale workers.%s; set "
  "workers.%s.attentionDP=false, or scale the role with workers.%s.autoscaling instead of the planner") $key $key $key $key) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- $dashboard := .Values.monitoring.dashboard }}
{{- if and $dashboard.enabled $dashboard.namespace (ne $dashboard.namespace .Release.Namespace) }}
{{- /* Rule: the dashboard is never written into one of Kubernetes' own namespaces (kube-*) but the release's. */}}
{{- if hasPrefix "kube-" $dashboard.namespace }}
{{- fail (printf (print "monitoring.dashboard.namespace=%s is one of Kubernetes' own namespaces (kube-*), outside the release "
  "namespace %s: the chart writes no object there, monitoring.dashboard.allowedNamespaces or not; set "
  "monitoring.dashboard.namespace=\"\" (the release namespace), or the namespace of your Grafana's dashboard sidecar")
  $dashboard.namespace .Release.Namespace) }}
{{- end }}
{{- /* Rule: the dashboard leaves the release namespace only for a namespace monitoring.dashboard.allowedNamespaces names. */}}
{{- if not (has $dashboard.namespace $dashboard.allowedNamespaces) }}
{{- fail (printf (print "monitoring.dashboard.namespace=%s writes the dashboard's ConfigMap outside the release namespace %s, "
  "and monitoring.dashboard.allowedNamespaces (%s) does not name it; set monitoring.dashboard.namespace=\"\" (the release "
  "namespace), or name %s in monitoring.dashboard.allowedNamespaces (under Argo CD, the Application's AppProject must "
  "allow it as a destination too: examples/argocd/appproject.yaml)")
  $dashboard.namespace .Release.Namespace (toJson $dashboard.allowedNamespaces) $dashboard.namespace) }}
{{- end }}
{{- end }}
{{- $cost := .Values.monitoring.cost }}
{{- if $cost.enabled }}
{{- /* Rule: the cost rules need the Dynamo frontend's token counter. */}}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- fail (print "monitoring.cost.enabled=true with runtime=trtllm-serve: the cost rules divide by the output tokens the Dynamo "
  "frontend counts (dynamo_frontend_output_tokens_total), and trtllm-serve serves no token counter (TensorRT-LLM 1.2's "
  "collector has request counts and latency histograms only); set monitoring.cost.enabled=false, or runtime=dynamo") }}
{{- end }}
{{- /* Rule: the cost rules live in the PrometheusRule. */}}
{{- if not .Values.monitoring.prometheusRule.enabled }}
{{- fail (print "monitoring.cost.enabled=true renders recording rules into the PrometheusRule, but "
  "monitoring.prometheusRule.enabled=false; set monitoring.prometheusRule.enabled=true, or monitoring.cost.enabled=false") }}
{{- end }}
{{- /* Rule: the cost rules need the price of a GPU-hour of gpu.type (the chart invents none). */}}
{{- if not (hasKey $cost.gpuHourPrice .Values.gpu.type) }}
{{- fail (printf (print "monitoring.cost.enabled=true needs the price of one %s GPU-hour (gpu.type=%s), and "
  "monitoring.cost.gpuHourPrice has none (%s); set monitoring.cost.gpuHourPrice.%s to what you pay, e.g. "
  "--set monitoring.cost.gpuHourPrice.%s=5.5: the chart invents no price")
  .Values.gpu.type .Values.gpu.type (toJson $cost.gpuHourPrice) .Values.gpu.type .Values.gpu.type) }}
{{- end }}
{{- end }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $release := include "gpt-oss.trtllmServe.release" . | fromYaml }}
{{- if eq (toString $release.servesGauges) "no" }}
{{- $gauges := list "trtllm_num_requests_waiting" "trtllm_num_requests_running" "trtllm_kv_cache_utilization" }}
{{- /* Rule: the endpoint picker needs the load gauges of TensorRT-LLM 1.3.0 or newer. */}}
{{- if .Values.inferencePool.enabled }}
{{- fail (printf (print "inferencePool.enabled=true: the endpoint picker scores pods by %s, which TensorRT-LLM serves from "
  "release 1.3.0 on (PRs #11243 and #12545, after 1.2), but trtllmServe.image.tag=%s is TensorRT-LLM %s, so every pod would look "
  "idle and empty; set trtllmServe.image.tag to a TensorRT-LLM release 1.3.0 or newer, or inferencePool.enabled=false")
  (join ", " $gauges) $release.tag $release.version) }}
{{- end }}
{{- $a := .Values.trtllmServe.autoscaling }}
{{- if $a.enabled }}
{{- $custom := toJson (dict "trigger" $a.trigger "metric" $a.metric) }}
{{- range $gauge := $gauges }}
{{- /* Rule: a scaler reads no gauge the release does not serve. */}}
{{- if contains $gauge $custom }}
{{- fail (printf (print "trtllmServe.autoscaling reads %s, which TensorRT-LLM serves from release 1.3.0 on (PRs #11243 and "
  "#12545, after 1.2), but trtllmServe.image.tag=%s is TensorRT-LLM %s, so the scaler would read nothing and never scale; keep "
  "the default trigger (requests waiting in trtllm-serve's queue, from request_queue_time_seconds, which %s serves), or set "
  "trtllmServe.image.tag to a release 1.3.0 or newer") $gauge $release.tag $release.version $release.version) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
