{{- /* Rules of runtime=trtllm-serve: the pod fits a node, its flags and engine YAML do not fight the chart's. */}}

{{/*
Rules of runtime=trtllm-serve: the pod fits a node, the GPU runs the quantization, the engine YAML and
the extra flags do not fight the chart's, and no Dynamo-only value is changed (it would be ignored).
Usage: {{ include "gpt-oss.checkValues.trtllmServe" . }}
*/}}
{{- define "gpt-oss.checkValues.trtllmServe" -}}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $gpu := index . (include "gpt-oss.object" (list "gpt-oss.gpuFacts" .)) }}
{{- $t := .Values.trtllmServe }}
{{- $gpus := int $t.gpus }}
{{- /* Rule: the pod's GPUs fit one node. */}}
{{- if gt $gpus (int $gpu.perNode) }}
{{- $fit := list }}
{{- range list 1 4 8 }}{{ if le . (int $gpu.perNode) }}{{ $fit = append $fit (toString .) }}{{ end }}{{ end }}
{{- fail (printf "trtllmServe.gpus=%d needs %d GPUs in one pod, but a %s node has %d (gpu.perNode); allowed: trtllmServe.gpus %s"
  $gpus $gpus .Values.gpu.type (int $gpu.perNode) (join " or " $fit)) }}
{{- end }}
{{- /* Rule: W4A8_MXFP4_MXFP8 runs on Blackwell only. */}}
{{- if and (eq $t.overrideQuantAlgo "W4A8_MXFP4_MXFP8") (not $gpu.blackwell) }}
{{- fail (printf (print "trtllmServe.overrideQuantAlgo=W4A8_MXFP4_MXFP8 needs Blackwell GPUs, but gpu.type=%s; allowed: gpu.type "
  "B200 or GB200, or trtllmServe.overrideQuantAlgo W4A16_MXFP4 (what Hopper runs) or empty") .Values.gpu.type) }}
{{- end }}

{{- /* The engine YAML's keys: gpt-oss.checkValues.engine, against the release of trtllmServe.image.tag. */}}
{{- /* Rule: the engine YAML leaves the KV cache's memory fraction to trtllmServe.freeGpuMemoryFraction. */}}
{{- $kvCache := get (default dict $t.engine) "kv_cache_config" }}
{{- if and (kindIs "map" $kvCache) (hasKey $kvCache "free_gpu_memory_fraction") }}
{{- fail (print "trtllmServe.engine.kv_cache_config.free_gpu_memory_fraction would silently override "
  "--kv_cache_free_gpu_memory_fraction; set trtllmServe.freeGpuMemoryFraction instead") }}
{{- end }}

{{- /* Extra flags: only options the pinned trtllm-serve has, and none the chart already writes. */}}
{{- $options := include "gpt-oss.trtllmServeOptions" . | fromYaml }}
{{- $written := dict "--host" "(the pod listens on all addresses)" "--port" "trtllmServe.httpPort" "--backend" "(always pytorch)"
  "--tensor_parallel_size" "trtllmServe.gpus" "--tp_size" "trtllmServe.gpus" "--moe_expert_parallel_size" "trtllmServe.gpus"
  "--ep_size" "trtllmServe.gpus" "--max_batch_size" "trtllmServe.maxBatchSize" "--trust_remote_code" "(always set)"
  "--config" "trtllmServe.engine" "--extra_llm_api_options" "trtllmServe.engine"
  "--free_gpu_memory_fraction" "trtllmServe.freeGpuMemoryFraction"
  "--kv_cache_free_gpu_memory_fraction" "trtllmServe.freeGpuMemoryFraction" }}
{{- range $t.extraArgs }}
{{- if hasPrefix "--" . }}
{{- $name := regexReplaceAll "=.*$" . "" }}
{{- /* Rule: no extra flag the chart already writes. */}}
{{- if hasKey $written $name }}
{{- fail (printf "trtllmServe.extraArgs sets %s, which the chart already writes from %s; set that instead" $name (get $written $name)) }}
{{- end }}
{{- /* Rule: only flags the pinned trtllm-serve knows. */}}
{{- if not (has $name $options.names) }}
{{- fail (printf "trtllmServe.extraArgs has %s, which trtllm-serve (%s) does not know, so the server would not start; allowed: %s"
  $name $options.source (join ", " $options.names)) }}
{{- end }}
{{- end }}
{{- end }}

{{- /* Dynamo-only values: a changed one would be ignored without a word. */}}
{{- $defaults := include "gpt-oss.dynamoOnlyDefaults" . | fromYaml }}
{{- $current := dict "workers" .Values.workers "frontend" (pick .Values.frontend "replicas" "routerMode" "httpPort" "resources")
  "monitoring" (dict "dashboard" (pick .Values.monitoring.dashboard "enabled")) }}
{{- $changed := include "gpt-oss.changedValues" (dict "path" "" "value" $current "default" $defaults) | fromYamlArray }}
{{- /* Rule: Dynamo-only values keep their chart defaults. */}}
{{- if $changed }}
{{- fail (printf (print "runtime=trtllm-serve deploys no DynamoGraphDeployment, so these Dynamo-only values would be ignored: %s; "
  "keep their chart defaults (trtllmServe.* configures this runtime) or set runtime=dynamo") (join ", " $changed)) }}
{{- end }}
{{- end }}
{{- end }}
