{{- /* The engine settings of a worker role: its engine keys plus those the chart derives from its structured values. */}}

{{/*
A worker role's TensorRT-LLM engine settings: its free-form engine keys plus the keys the chart
derives from the role's structured fields (parallelism, batch, tokens, memory fraction); with kv (the
gpt-oss.kvRouting map) under KV-aware routing, also the block size and KV-cache block reuse.
Usage: {{ include "gpt-oss.engineConfig" (dict "role" .Values.workers.prefill "kv" $kv) | fromYaml }}
*/}}
{{- define "gpt-oss.engineConfig" -}}
{{- $role := .role }}
{{- $engine := deepCopy (default dict $role.engine) }}
{{- $_ := set $engine "tensor_parallel_size" (int $role.tensorParallelSize) }}
{{- $_ = set $engine "pipeline_parallel_size" (int $role.pipelineParallelSize) }}
{{- $_ = set $engine "moe_expert_parallel_size" (int $role.expertParallelSize) }}
{{- $_ = set $engine "enable_attention_dp" (and $role.attentionDP true) }}
{{- $_ = set $engine "max_batch_size" (int $role.maxBatchSize) }}
{{- if not (kindIs "invalid" $role.maxNumTokens) }}
{{- $_ = set $engine "max_num_tokens" (int $role.maxNumTokens) }}
{{- end }}
{{- if not (kindIs "invalid" $role.maxSeqLen) }}
{{- $_ = set $engine "max_seq_len" (int $role.maxSeqLen) }}
{{- end }}
{{- $kv := deepCopy (default dict (get $engine "kv_cache_config")) }}
{{- $_ = set $kv "free_gpu_memory_fraction" $role.freeGpuMemoryFraction }}
{{- if and .kv .kv.enabled }}
{{- $_ = set $kv "tokens_per_block" (int .kv.blockSize) }}
{{- $_ = set $kv "enable_block_reuse" true }}
{{- end }}
{{- $_ = set $engine "kv_cache_config" $kv }}
{{- toYaml $engine }}
{{- end }}
