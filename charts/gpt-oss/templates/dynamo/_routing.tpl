{{- /* Routing of the Dynamo frontend: router mode, and what KV-aware routing sets on the frontend and workers. */}}

{{/*
KV-aware routing (frontend.routerMode=kv) as the chart sets it up; empty map fields when another mode is on.
  enabled: routerMode is kv
  blockSize: tokens per KV block, the same on the frontend (--kv-cache-block-size), every worker
    (--kv-block-size) and every engine (kv_cache_config.tokens_per_block): the engines' own
    tokens_per_block when set, else 32 (the default of dynamo.trtllm's --kv-block-size in 1.2.1)
  kvEvents: workers publish KV events and the router consumes them; aggregated only: Dynamo 1.2.1's
    TensorRT-LLM disaggregated example routes with --no-router-kv-events (the router predicts cache state)
  publishFlag: the worker flag that publishes them, by runtime version (--publish-kv-events from 1.3.0)
  queueThreshold: the frontend's --router-queue-threshold from runtime 1.4.0, which turned router queueing off
    by default (the release line's frontend.routerQueueThreshold keeps it on); "" before 1.4.0 (on by default)
Usage: {{ $kv := index . (include "gpt-oss.object" (list "gpt-oss.kvRouting" .)) }}
*/}}
{{- define "gpt-oss.kvRouting" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeKvRouting" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.kvRouting, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeKvRouting" . }} (templates read it through gpt-oss.kvRouting)
*/}}
{{- define "gpt-oss.computeKvRouting" -}}
{{- $enabled := and (eq .Values.runtime "dynamo") (eq .Values.frontend.routerMode "kv") }}
{{- $blockSize := 32 }}
{{- $disaggregated := or .Values.workers.prefill.enabled .Values.workers.decode.enabled }}
{{- range $key := list "worker" "prefill" "decode" }}
{{- $role := get $.Values.workers $key }}
{{- $kvConfig := get (default dict $role.engine) "kv_cache_config" | default dict }}
{{- if and $role.enabled (hasKey $kvConfig "tokens_per_block") }}
{{- $blockSize = int (get $kvConfig "tokens_per_block") }}
{{- end }}
{{- end }}
enabled: {{ $enabled }}
blockSize: {{ $blockSize }}
kvEvents: {{ and $enabled (not $disaggregated) }}
{{- if $enabled }}
{{- $version := (index . (include "gpt-oss.object" (list "gpt-oss.dynamoRuntimeVersion" .))).version }}
publishFlag: {{ ternary "--publish-kv-events" "--publish-events-and-metrics" (semverCompare ">=1.3.0-0" $version) }}
{{- $threshold := (index . (include "gpt-oss.object" (list "gpt-oss.dynamoRelease" .))).frontend.routerQueueThreshold }}
queueThreshold: {{ ternary $threshold "" (semverCompare ">=1.4.0-0" $version) | quote }}
{{- end }}
{{- end }}

{{/*
Frontend arguments of the router: the mode, and under kv the block size, when disaggregated no KV events, and
the queue threshold (gpt-oss.kvRouting).
Usage: {{ include "gpt-oss.routerArgs" . | nindent 2 }}
*/}}
{{- define "gpt-oss.routerArgs" -}}
{{- $kv := index . (include "gpt-oss.object" (list "gpt-oss.kvRouting" .)) -}}
- --router-mode
- {{ .Values.frontend.routerMode }}
{{- if $kv.enabled }}
- --kv-cache-block-size
- {{ int $kv.blockSize | quote }}
{{- if not $kv.kvEvents }}
- --no-router-kv-events
{{- end }}
{{- with $kv.queueThreshold }}
- --router-queue-threshold
- {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Worker arguments of KV-aware routing: the block size the worker registers (the KV-event publishing flag follows from
gpt-oss.workerPublishArgs, which also turns it on for the planner).
Usage: {{ include "gpt-oss.kvWorkerArgs" . }}
*/}}
{{- define "gpt-oss.kvWorkerArgs" -}}
{{- $kv := index . (include "gpt-oss.object" (list "gpt-oss.kvRouting" .)) }}
{{- if $kv.enabled }}
- --kv-block-size
- {{ int $kv.blockSize | quote }}
{{- end }}
{{- end }}
