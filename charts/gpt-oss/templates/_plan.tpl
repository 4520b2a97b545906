{{- /* The plan: the worker roles and every number the chart computes from them (_plan-*.tpl: the rest of the plan). */}}

{{/*
Worker roles in a fixed order, with the Dynamo component name and disaggregation mode of each. JSON: eight checks
and templates read it in every render.
Usage: {{ range $role := include "gpt-oss.roleTable" . | fromJsonArray }}
*/}}
{{- define "gpt-oss.roleTable" -}}
[
  {"key": "worker", "component": "TRTLLMWorker", "mode": "agg"},
  {"key": "prefill", "component": "TRTLLMPrefillWorker", "mode": "prefill"},
  {"key": "decode", "component": "TRTLLMDecodeWorker", "mode": "decode"}
]
{{- end }}

{{/*
The plan of gpt-oss.computePlan, computed once per render (gpt-oss.memo): a dozen templates read one computation.
Usage: {{ $plan := index . (include "gpt-oss.object" (list "gpt-oss.plan" .)) }}
*/}}
{{- define "gpt-oss.plan" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computePlan" .) }}
{{- end }}

{{/*
The plan: every number the chart computes (GPUs per role and in total, decode slots, benchmark
concurrency and request count, the admission gate's capacity, the trtllm-serve startup allowance), for either
runtime, computed here once and read by every template and the tests. Decode slots: max batch size x attention-DP
ranks x replicas of the roles that decode (all but prefill). decodeGpus and prefillGpus: the GPUs of the roles that
decode (all but prefill) and of those that prefill (all but decode). Admission gate (dynamo.admissionGate, its
limits per attention-DP rank): gateAdmitsPerReplica, the requests a replica takes before it rejects (engine limit
plus queue, x ranks; 0 when no engine request limit bounds it), and admissionCapacity, the sum over the replicas of
the roles that decode (0: unbounded).
Usage: {{ $plan := include "gpt-oss.computePlan" . | fromYaml }} (templates read it through gpt-oss.plan)
*/}}
{{- define "gpt-oss.computePlan" -}}
{{- $roles := list }}
{{- $totalGpus := 0 }}
{{- /* Replica counts an autoscaler or the planner owns, and the DGD fields that turn on their adapters. */}}
{{- $owners := index . (include "gpt-oss.object" (list "gpt-oss.replicaOwners" .)) }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- /* One role: the trtllm-serve pods, TP = EP = gpus. */}}
{{- $t := .Values.trtllmServe }}
{{- $gpusPerReplica := int $t.gpus }}
{{- $owner := $owners.server }}
{{- $replicas := int $owner.replicas }}
{{- $gpus := mul $gpusPerReplica $replicas }}
{{- $dpRanks := ternary $gpusPerReplica 1 (and $t.attentionDP true) }}
{{- /* Without --max_batch_size, TensorRT-LLM's default (BuildConfig.max_batch_size, 2048) applies. */}}
{{- $batch := ternary 2048 (int $t.maxBatchSize) (kindIs "invalid" $t.maxBatchSize) }}
{{- $slotsPerReplica := mul $batch $dpRanks }}
{{- $roles = append $roles (dict "key" "server" "component" "trtllm-serve" "mode" "agg" "valuesKey" "trtllmServe" "replicas" $replicas
  "gpusPerReplica" $gpusPerReplica "gpus" $gpus "tensorParallelSize" $gpusPerReplica "expertParallelSize" $gpusPerReplica
  "attentionDpRanks" $dpRanks "maxBatchSize" $batch "slotsPerReplica" $slotsPerReplica "slots" (mul $slotsPerReplica $replicas)
  "scaledBy" $owner.scaledBy "minReplicas" (int $owner.minReplicas) "maxReplicas" (int $owner.maxReplicas)) }}
{{- $totalGpus = $gpus }}
{{- else }}
{{- range $row := include "gpt-oss.roleTable" . | fromJsonArray }}
{{- $role := get $.Values.workers $row.key }}
{{- if $role.enabled }}
{{- $owner := get $owners $row.key }}
{{- $replicas := int $owner.replicas }}
{{- $gpusPerReplica := mul (int $role.tensorParallelSize) (int $role.pipelineParallelSize) }}
{{- $gpus := mul $gpusPerReplica $replicas }}
{{- $dpRanks := ternary (int $role.tensorParallelSize) 1 (and $role.attentionDP true) }}
{{- $slotsPerReplica := mul (int $role.maxBatchSize) $dpRanks }}
{{- $gate := $.Values.dynamo.admissionGate }}
{{- $gateAdmits := ternary 0 (mul (add (int $gate.engineRequestLimit) (int $gate.requestQueueLimit)) $dpRanks)
  (kindIs "invalid" $gate.engineRequestLimit) }}
{{- /* Extra DGD component fields: the user's, then the scaling adapter when something scales the role. */}}
{{- $fields := merge (deepCopy $owner.fields) (deepCopy $.Values.workers.componentFields) }}
{{- $roles = append $roles (dict "key" $row.key "component" $row.component "mode" $row.mode "valuesKey" (printf "workers.%s" $row.key) "replicas"
  $replicas "gpusPerReplica" $gpusPerReplica "gpus" $gpus "tensorParallelSize" (int $role.tensorParallelSize) "expertParallelSize"
  (int $role.expertParallelSize) "attentionDpRanks" $dpRanks "maxBatchSize" (int $role.maxBatchSize) "slotsPerReplica" $slotsPerReplica
  "slots" (mul $slotsPerReplica $replicas) "scaledBy" $owner.scaledBy "minReplicas" (int $owner.minReplicas) "maxReplicas" (int $owner.maxReplicas)
  "adapter" $owner.adapter "fields" $fields "gateAdmitsPerReplica" $gateAdmits) }}
{{- $totalGpus = add $totalGpus $gpus }}
{{- end }}
{{- end }}
{{- end }}
{{- $decodeSlots := 0 }}
{{- $decodeGpus := 0 }}
{{- $prefillGpus := 0 }}
{{- $admissionCapacity := 0 }}
{{- range $roles }}
{{- if ne .mode "prefill" }}{{ $decodeSlots = add $decodeSlots .slots }}{{ $decodeGpus = add $decodeGpus .gpus }}{{ end }}
{{- if and (ne .mode "prefill") .gateAdmitsPerReplica }}
{{- $admissionCapacity = add $admissionCapacity (mul (int .gateAdmitsPerReplica) (int .replicas)) }}
{{- end }}
{{- if ne .mode "decode" }}{{ $prefillGpus = add $prefillGpus .gpus }}{{ end }}
{{- end }}
{{- $bench := .Values.benchmark }}
{{- $benchGpus := ternary $totalGpus (int $bench.gpuCount) (kindIs "invalid" $bench.gpuCount) }}
{{- $derived := ternary $decodeSlots (mul (int $bench.concurrencyPerGpu) $benchGpus) (eq $bench.concurrencyFrom "decodeSlots") }}
{{- $concurrency := ternary $derived (int $bench.concurrency) (kindIs "invalid" $bench.concurrency) }}
{{- $requests := ternary (mul (int $bench.requestCountMultiplier) $concurrency) (int $bench.requestCount) (kindIs "invalid" $bench.requestCount) }}
{{- $disaggregated := false }}
{{- range $roles }}{{ if ne .mode "agg" }}{{ $disaggregated = true }}{{ end }}{{ end }}
{{- /* DGD components beyond the frontend and workers (the planner). */}}
{{- $extraComponents := list }}
{{- if and .Values.planner.enabled (ne .Values.runtime "trtllm-serve") }}
{{- $extraComponents = append $extraComponents
  (include "gpt-oss.planner.component" (dict "root" . "plan" (dict "roles" $roles "disaggregated" $disaggregated)) | fromYaml) }}
{{- end }}
runtime: {{ .Values.runtime }}
roles: {{ toYaml $roles | nindent 2 }}
extraComponents: {{ toYaml $extraComponents | nindent 2 }}
{{- if ne .Values.runtime "trtllm-serve" }}
frontend: {{ toYaml $owners.frontend | nindent 2 }}
{{- end }}
totalGpus: {{ $totalGpus }}
decodeSlots: {{ $decodeSlots }}
admissionCapacity: {{ $admissionCapacity }}
decodeGpus: {{ $decodeGpus }}
prefillGpus: {{ $prefillGpus }}
disaggregated: {{ $disaggregated }}
{{- if eq .Values.runtime "trtllm-serve" }}
trtllmServe:
  # Startup probe: one try every 10 s for trtllmServe.startupTimeoutSeconds.
  startupFailureThreshold: {{ div (add (int .Values.trtllmServe.startupTimeoutSeconds) 9) 10 }}
{{- end }}
benchmark:
  gpuCount: {{ $benchGpus }}
  concurrency: {{ $concurrency }}
  requestCount: {{ $requests }}
{{- end }}
