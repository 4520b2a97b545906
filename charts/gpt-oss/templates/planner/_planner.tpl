{{- /* Dynamo's SLA planner: its image, its --config, and the DGD component that runs it. */}}

{{/*
Name of the planner's ServiceAccount, Role and RoleBinding (planner.rbac.create).
Usage: {{ include "gpt-oss.planner.name" . }}
*/}}
{{- define "gpt-oss.planner.name" -}}
{{- printf "%s-planner" (include "gpt-oss.fullname" .) }}
{{- end }}

{{/*
The account the planner pod really runs as, and what it may do: the Dynamo operator sets serviceAccountName
planner-serviceaccount on every planner pod whatever the DGD says (1.5.0-dev internal/dynamo/graph.go, planner
components; component_planner.go's base pod spec), and binds that account, in every namespace with a DGD, to its
planner ClusterRole (internal/rbac/manager.go EnsureServiceAccountWithRBAC: RoleBinding planner-serviceaccount-binding;
the platform chart's components/operator/templates/planner.yaml holds the rules; namespace-restricted mode: the same
rules as Role planner-role). That grant is the operator's: the chart cannot narrow it. planner.rbac.create adds the
chart's Role (what the planner calls beyond it), bound to that same account. docs/security.md, "Least privilege".
Usage: {{ $identity := include "gpt-oss.planner.identity" . | fromYaml }}
*/}}
{{- define "gpt-oss.planner.identity" -}}
account: planner-serviceaccount
role: {{ ternary (include "gpt-oss.planner.name" .) "" (and .Values.planner.rbac.create true) | quote }}
operatorGrant: {{ print "dynamographdeployments get, list, create, update, patch (every DGD of the namespace); "
  "dynamographdeploymentscalingadapters/scale patch (every adapter); dynamoworkermetadatas get, list, watch, create, "
  "update, patch, delete; endpointslices get, list, watch" | quote }}
{{- end }}

{{/*
Planner image: planner.image, else Dynamo's dedicated planner image (the release line's images.planner, beside
the runtime image, same version; every line the chart renders for has it, from Dynamo 1.1.0).
Usage: {{ include "gpt-oss.planner.image" . }}
*/}}
{{- define "gpt-oss.planner.image" -}}
{{- $d := index . (include "gpt-oss.object" (list "gpt-oss.dynamoImage" .)) }}
{{- $p := .Values.planner.image }}
{{- $version := .Values.dynamo.runtimeVersionOverride | default (toString $d.tag) | trimPrefix "v" }}
{{- $tag := $p.tag | default (ternary $version (toString $d.tag) (hasPrefix "sha256:" (toString $d.tag))) }}
{{- if $p.repository }}
{{- include "gpt-oss.image" (dict "repository" $p.repository "tag" $tag) }}
{{- else }}
{{- $name := (index . (include "gpt-oss.object" (list "gpt-oss.dynamoRelease" .))).images.planner }}
{{- include "gpt-oss.image" (dict "repository" (printf "%s/%s" (dir $d.repository) $name) "tag" $tag) }}
{{- end }}
{{- end }}

{{/*
The Dynamo release of the planner: planner.image.tag when it is a version, else the runtime's
(dynamo.runtimeVersionOverride, else dynamo.image.tag); empty when neither says.
Usage: {{ $version := include "gpt-oss.planner.version" . }}
*/}}
{{- define "gpt-oss.planner.version" -}}
{{- $tag := toString .Values.planner.image.tag | trimPrefix "v" }}
{{- if regexMatch `^[0-9]+\.[0-9]+\.[0-9]+` $tag }}
{{- regexFind `^[0-9]+\.[0-9]+\.[0-9]+` $tag }}
{{- else }}
{{- (index . (include "gpt-oss.object" (list "gpt-oss.dynamoRuntimeVersion" .))).version }}
{{- end }}
{{- end }}

{{/*
The parallelism of one worker role in aiconfigurator's terms (a PickedParallelConfig): TensorRT-LLM's TP
with attention-DP is attention DP (attention TP 1); the MoE runs EP ways, TP/EP ways within each expert.
Usage: {{ include "gpt-oss.planner.pick" $role | fromYaml }}
*/}}
{{- define "gpt-oss.planner.pick" -}}
{{- $tp := int .tensorParallelSize }}
{{- $ep := int .expertParallelSize }}
{{- $adp := and .attentionDP true }}
tp: {{ ternary 1 $tp $adp }}
pp: {{ int .pipelineParallelSize }}
dp: {{ ternary $tp 1 $adp }}
moe_tp: {{ div $tp $ep }}
moe_ep: {{ $ep }}
{{- end }}

{{/*
The planner's --config (PlannerConfig of ai-dynamo 1.2.1): values, mode from the topology, engine GPUs
from the plan, and aic_interpolation from the plan and the benchmark workload.
Usage: {{ $config := include "gpt-oss.planner.config" (dict "root" $ "plan" $plan) | fromYaml }}
*/}}
{{- define "gpt-oss.planner.config" -}}
{{- $root := .root }}
{{- $pl := $root.Values.planner }}
{{- $byMode := dict }}
{{- range .plan.roles }}{{ $_ := set $byMode .mode . }}{{ end }}
{{- $prefill := get $byMode "prefill" | default (get $byMode "agg") }}
{{- $decode := get $byMode "decode" | default (get $byMode "agg") }}
{{- $config := dict "environment" "kubernetes" "backend" "trtllm" "mode" (ternary "disagg" "agg" .plan.disaggregated) "optimization_target"
  $pl.optimizationTarget "ttft_ms" (float64 $pl.ttftMs) "itl_ms" (float64 $pl.itlMs) "enable_throughput_scaling" $pl.throughputScaling
  "enable_load_scaling" $pl.loadScaling "pre_deployment_sweeping_mode" $pl.preDeploymentSweepingMode "throughput_adjustment_interval_seconds"
  (int $pl.throughputAdjustmentIntervalSeconds) "load_adjustment_interval_seconds" (int $pl.loadAdjustmentIntervalSeconds) "max_gpu_budget"
  (int $pl.maxGpuBudget) "min_gpu_budget" (int $pl.minGpuBudget) "min_endpoint" (int $pl.minEndpoint) "prefill_engine_num_gpu"
  (int $prefill.gpusPerReplica) "decode_engine_num_gpu" (int $decode.gpusPerReplica) "advisory" $pl.advisory "model_name" $root.Values.model.id
  "report_output_dir" "/tmp/planner_reports" }}
{{- if $pl.aicInterpolation.enabled }}
{{- $ai := $pl.aicInterpolation }}
{{- $systems := $root.Files.Get "data/aiconfigurator-systems.yaml" | fromYaml }}
{{- $context := 131072 }}
{{- if not (kindIs "invalid" $ai.sweepMaxContextLength) }}
{{- $context = int $ai.sweepMaxContextLength }}
{{- else }}
{{- range .plan.roles }}{{ with (get $root.Values.workers .key).maxSeqLen }}{{ $context = min $context (int .) }}{{ end }}{{ end }}
{{- end }}
{{- $_ := set $config "aic_interpolation"
  (dict "hf_id" $root.Values.model.id "system" (get $systems $root.Values.gpu.type) "backend" "trtllm" "isl"
  (int $root.Values.benchmark.inputTokensMean) "osl" (int $root.Values.benchmark.outputTokensMean) "sweep_max_context_length" $context
  "prefill_interpolation_granularity" (int $ai.prefillGranularity) "decode_interpolation_granularity" (int $ai.decodeGranularity) "prefill_pick"
  (include "gpt-oss.planner.pick" (get $root.Values.workers $prefill.key) | fromYaml) "decode_pick"
  (include "gpt-oss.planner.pick" (get $root.Values.workers $decode.key) | fromYaml)) }}
{{- end }}
{{- toYaml $config }}
{{- end }}

{{/*
The planner as a DGD component, as the DGD template writes it: name, type, replicas, labels, pod fields, the main
container (without name and resources) and its resources.
Usage: {{ $component := include "gpt-oss.planner.component" (dict "root" $ "plan" $plan) | fromYaml }}
*/}}
{{- define "gpt-oss.planner.component" -}}
{{- $root := .root }}
{{- $config := include "gpt-oss.planner.config" . | fromYaml }}
name: Planner
type: planner
replicas: 1
labels: {{ include "gpt-oss.labels" (dict "root" $root "component" "planner") | nindent 2 }}
podSpec:
  {{- include "gpt-oss.podSecurityContext" $root | nindent 2 }}
  # The chart's grace period, as on the frontend and workers (the operator would give the planner 60 s).
  terminationGracePeriodSeconds: {{ int (index $root (include "gpt-oss.object" (list "gpt-oss.gracefulShutdown" $root))).terminationGracePeriodSeconds }}
  # No serviceAccountName: the operator sets planner-serviceaccount on every planner pod (gpt-oss.planner.identity).
  {{- with $root.Values.dynamo.imagePullSecrets }}
  imagePullSecrets: {{ toYaml . | nindent 4 }}
  {{- end }}
container:
  image: {{ include "gpt-oss.planner.image" $root | quote }}
  imagePullPolicy: {{ $root.Values.planner.image.pullPolicy }}
  command: ["python3", "-m", "dynamo.planner"]
  args:
    - --config
    - {{ toJson $config | quote }}
  env:
    - name: PROMETHEUS_ENDPOINT
      value: {{ $root.Values.planner.prometheusEndpoint | quote }}
    # Non-root: caches and reports go to /tmp.
    - name: HOME
      value: /tmp
  securityContext: {{ toYaml $root.Values.securityContext.container | nindent 4 }}
resources: {{ toYaml $root.Values.planner.resources | nindent 2 }}
{{- end }}
