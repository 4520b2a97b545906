{{- /* The Dynamo runtime: frontend and worker containers and pods of the DynamoGraphDeployment. */}}

{{/*
In-cluster URL of the frontend Service the Dynamo operator creates (<dgd name>-frontend), whose port is always 8000
(its DynamoServicePort; the Service forwards to the container port named http, frontend.httpPort).
Usage: {{ include "gpt-oss.frontendUrl" . }}
*/}}
{{- define "gpt-oss.frontendUrl" -}}
{{- printf "http://%s-frontend.%s.svc:8000" (include "gpt-oss.fullname" .) .Release.Namespace }}
{{- end }}

{{/*
The Dynamo operator's rolling-update annotations of the worker pod templates (it reads them per component,
dgd_worker_rollout_reconciler.go resolveRollingUpdateParams; its default is 25% surge, 25% unavailable, rounded up and
down): with every worker on one node (workers.sameNode) no GPU is left for a surge pod, so each role's old pod goes
before its replacement starts (max surge 0, max unavailable 1); nothing otherwise.
Usage: {{ include "gpt-oss.workerRollingUpdate" . | nindent 12 }}
*/}}
{{- define "gpt-oss.workerRollingUpdate" -}}
{{- if .Values.workers.sameNode }}
nvidia.com/deployment-rolling-update-max-surge: "0"
nvidia.com/deployment-rolling-update-max-unavailable: "1"
{{- end }}
{{- end }}

{{/*
The flags gpt-oss.workerArgs writes, each with the value that sets it: workers.extraArgs may not repeat one (the
worker would take the later, and the plan, smoke test and benchmark would describe the other). tests/chart/engine/test_engine.py
checks that every flag the chart renders is listed.
Usage: {{ $owned := include "gpt-oss.workerFlags" . | fromYaml }}
*/}}
{{- define "gpt-oss.workerFlags" -}}
--model: model.id (the model cache's path to it)
--model-path: model.id (the model cache's path to it)
--served-model-name: model.id (the name the smoke test, the benchmark and the router ask for)
--extra-engine-args: workers.<role>.engine and the role's structured values
--dyn-reasoning-parser: the chart (gpt-oss's reasoning parser, gpt_oss)
--dyn-tool-call-parser: the chart (gpt-oss's tool-call parser, harmony)
--disaggregation-mode: workers.prefill.enabled and workers.decode.enabled
--kv-block-size: frontend.routerMode=kv and the engines' kv_cache_config.tokens_per_block
--publish-kv-events: frontend.routerMode and planner.enabled
--publish-events-and-metrics: frontend.routerMode and planner.enabled
{{- end }}

{{/*
Command-line arguments of one worker role's dynamo.trtllm process (the model flag is the release line's).
Usage: {{ include "gpt-oss.workerArgs" (dict "root" $ "row" $row) }}
*/}}
{{- define "gpt-oss.workerArgs" -}}
- {{ (index .root (include "gpt-oss.object" (list "gpt-oss.dynamoRelease" .root))).worker.modelFlag }}
- {{ include "gpt-oss.modelPath" .root | quote }}
- --served-model-name
- {{ .root.Values.model.id | quote }}
- --extra-engine-args
- {{ printf "/engine/%s.yaml" .row.key | quote }}
- --dyn-reasoning-parser
- gpt_oss
- --dyn-tool-call-parser
- harmony
{{- if ne .row.mode "agg" }}
- --disaggregation-mode
- {{ .row.mode }}
{{- end }}
{{- include "gpt-oss.kvWorkerArgs" .root }}
{{- include "gpt-oss.workerPublishArgs" .root }}
{{- range .root.Values.workers.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}

{{/*
Environment of one worker role: shared worker env, role env, quantization override, the admission gate's limits
(gpt-oss.admissionGateEnv), and HF_HUB_OFFLINE=1 (no HF token: workers load from the model cache, never from the
hub, whatever modelCache.source is).
Usage: {{ include "gpt-oss.workerEnv" (dict "root" $ "role" $role) }}
*/}}
{{- define "gpt-oss.workerEnv" -}}
{{- $env := merge (deepCopy (default dict .role.env)) (deepCopy (default dict .root.Values.workers.env)) }}
{{- $env = merge (include "gpt-oss.admissionGateEnv" .root | fromYaml) $env }}
{{- with .root.Values.workers.overrideQuantAlgo }}
{{- $_ := set $env "OVERRIDE_QUANT_ALGO" . }}
{{- end }}
{{- if .root.Values.model.tiktoken.stage }}
{{- $_ := set $env "TIKTOKEN_ENCODINGS_BASE" (include "gpt-oss.tiktokenDir" .root) }}
{{- end }}
{{- $_ := set $env "HF_HUB_OFFLINE" "1" }}
{{- $list := list }}
{{- range $name := keys $env | sortAlpha }}
{{- $list = append $list (dict "name" $name "value" (include "gpt-oss.scalarString" (get $env $name))) }}
{{- end }}
{{- toYaml $list }}
{{- end }}

{{/*
The backend admission gate's variables of the release line's workers (its worker.admissionGate prefix, 1.7:
DYN_BACKEND_ADMISSION), from dynamo.admissionGate: none while no engine limit turns the gate on (upstream's
default), else each limit set and the queue limit, all per attention-DP rank. A map; the check-values rules keep
workers env from setting them.
Usage: {{ $gateEnv := include "gpt-oss.admissionGateEnv" . | fromYaml }}
*/}}
{{- define "gpt-oss.admissionGateEnv" -}}
{{- $prefix := (index . (include "gpt-oss.object" (list "gpt-oss.dynamoRelease" .))).worker.admissionGate }}
{{- $gate := .Values.dynamo.admissionGate }}
{{- $env := dict }}
{{- if and $prefix (or (not (kindIs "invalid" $gate.engineRequestLimit)) (not (kindIs "invalid" $gate.engineRequestWaitingLimit))) }}
{{- with $gate.engineRequestLimit }}{{ $_ := set $env (printf "%s_ENGINE_REQUEST_LIMIT" $prefix) (toString (int .)) }}{{ end }}
{{- with $gate.engineRequestWaitingLimit }}{{ $_ := set $env (printf "%s_ENGINE_REQUEST_WAITING_LIMIT" $prefix) (toString (int .)) }}{{ end }}
{{- $_ := set $env (printf "%s_REQUEST_QUEUE_LIMIT" $prefix) (toString (int $gate.requestQueueLimit)) }}
{{- end }}
{{- toYaml $env }}
{{- end }}

{{/*
Node selector of GPU worker pods: gpt-oss.gpuNodeSelector and the user's extra labels (which win).
Usage: {{ include "gpt-oss.workerNodeSelector" . | nindent 8 }}
*/}}
{{- define "gpt-oss.workerNodeSelector" -}}
{{- include "gpt-oss.stringMap" (merge (deepCopy .Values.workers.nodeSelector) (include "gpt-oss.gpuNodeSelector" . | fromJson)) }}
{{- end }}

{{/*
Pod affinity that puts every worker pod of the release on one node; each pod matches its own
term, so the first one schedules freely and the others follow it.
Usage: {{ include "gpt-oss.sameNodeAffinity" . | nindent 8 }}
*/}}
{{- define "gpt-oss.sameNodeAffinity" -}}
podAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          {{- include "gpt-oss.selectorLabels" . | nindent 10 }}
          app.kubernetes.io/component: worker
{{- end }}

{{/*
Pod-level settings shared by every worker role: placement, security, grace period, init wait and volumes.
Usage: {{ include "gpt-oss.workerPodSpec" . | nindent 8 }}
*/}}
{{- define "gpt-oss.workerPodSpec" -}}
{{- include "gpt-oss.podSecurityContext" . }}
# Time to finish admitted requests after SIGTERM: {{ (index . (include "gpt-oss.object" (list "gpt-oss.gracefulShutdown" .))).formula }}.
terminationGracePeriodSeconds: {{ int (index . (include "gpt-oss.object" (list "gpt-oss.gracefulShutdown" .))).terminationGracePeriodSeconds }}
nodeSelector: {{ include "gpt-oss.workerNodeSelector" . | nindent 2 }}
{{- with .Values.workers.tolerations }}
tolerations: {{ toYaml . | nindent 2 }}
{{- end }}
{{- if .Values.workers.sameNode }}
affinity: {{ include "gpt-oss.sameNodeAffinity" . | nindent 2 }}
{{- end }}
{{- with .Values.dynamo.imagePullSecrets }}
imagePullSecrets: {{ toYaml . | nindent 2 }}
{{- end }}
initContainers: {{ include "gpt-oss.checkModelContainer" (dict "root" . "paths" list) | nindent 2 }}
volumes:
  {{- include "gpt-oss.modelCache.volume" . | nindent 2 }}
  - name: engine-config
    configMap:
      name: {{ include "gpt-oss.fullname" . }}-engine
  {{- include "gpt-oss.scriptsVolume" . | nindent 2 }}
{{- end }}

{{/*
The main container of one worker role, whole: a podTemplate container named main (the operator merges its
defaults into main) with both mounts, env and resources.
Usage: {{ include "gpt-oss.workerContainer" (dict "root" $ "row" $row) | nindent 14 | trim }}
*/}}
{{- define "gpt-oss.workerContainer" -}}
name: main
image: {{ include "gpt-oss.image" (index .root (include "gpt-oss.object" (list "gpt-oss.dynamoImage" .root))) | quote }}
imagePullPolicy: {{ .root.Values.dynamo.image.pullPolicy }}
command: ["python3", "-m", "dynamo.trtllm"]
args: {{ include "gpt-oss.workerArgs" . | nindent 2 }}
securityContext: {{ toYaml .root.Values.securityContext.container | nindent 2 }}
volumeMounts:
  - name: engine-config
    mountPath: /engine
    readOnly: true
  - name: model-cache
    mountPath: {{ include "gpt-oss.modelCache.mountPoint" .root | quote }}
    readOnly: true
env: {{ include "gpt-oss.workerEnv" (dict "root" .root "role" (get .root.Values.workers .row.key)) | nindent 2 }}
resources:
  {{- $resources := deepCopy .root.Values.workers.resources }}
  {{- $gpu := dict "nvidia.com/gpu" (int .row.gpusPerReplica | toString) }}
  requests: {{ merge (default dict $resources.requests) $gpu | toYaml | nindent 4 }}
  limits: {{ merge (default dict $resources.limits) $gpu | toYaml | nindent 4 }}
{{- end }}

{{/*
Main-container fields of the frontend: command, environment (with its own
graceful-shutdown timeout) and the drain hooks.
Usage: {{ include "gpt-oss.frontendContainer" . | nindent 10 }}
*/}}
{{- define "gpt-oss.frontendContainer" -}}
{{- $shutdown := index . (include "gpt-oss.object" (list "gpt-oss.gracefulShutdown" .)) }}
image: {{ include "gpt-oss.image" (index . (include "gpt-oss.object" (list "gpt-oss.dynamoImage" .))) | quote }}
imagePullPolicy: {{ .Values.dynamo.image.pullPolicy }}
command: ["python3", "-m", "dynamo.frontend"]
args:
  {{- include "gpt-oss.routerArgs" . | nindent 2 }}
  - --http-port
  - {{ int .Values.frontend.httpPort | quote }}
# The operator's frontend Service (port 8000) and its probes target the container port named http: this one.
ports:
  - name: http
    containerPort: {{ int .Values.frontend.httpPort }}
    protocol: TCP
securityContext: {{ toYaml .Values.securityContext.container | nindent 2 }}
env:
  {{- if .Values.model.tiktoken.stage }}
  # The harmony tool-call parser reads its vocabulary here instead of fetching it.
  - name: TIKTOKEN_ENCODINGS_BASE
    value: {{ include "gpt-oss.tiktokenDir" . | quote }}
  {{- end }}
  # The frontend's own graceful shutdown: on SIGTERM it lets admitted requests finish for this long (Dynamo's
  # default is 5 s; lib/llm/src/http/service/service_v2.rs get_graceful_shutdown_timeout).
  - name: DYN_HTTP_GRACEFUL_SHUTDOWN_TIMEOUT_SECS
    value: {{ $shutdown.maxRequestSeconds | toString | quote }}
{{- include "gpt-oss.drainHooks" (dict "root" . "port" .Values.frontend.httpPort "model" .Values.model.id) }}
{{- end }}
