{{- /* Benchmark rules: the chart's AIPerf flags, and (runtime dynamo) requests that fit the engines and the frontend. */}}

{{/*
The benchmark's flags are the chart's own, and (runtime dynamo) its sequences fit the engines that serve them.
Usage: {{ include "gpt-oss.checkValues.benchmark" . }}
*/}}
{{- define "gpt-oss.checkValues.benchmark" -}}
{{- /* Rule: benchmark.extraArgs adds AIPerf flags; it does not repeat one the chart writes (gpt-oss.benchmarkFlags). */}}
{{- $ownedFlags := include "gpt-oss.benchmarkFlags" . | fromYaml }}
{{- range .Values.benchmark.extraArgs }}
{{- $flag := regexReplaceAll "=.*$" (toString .) "" }}
{{- if hasKey $ownedFlags $flag }}
{{- fail (printf (print "benchmark.extraArgs has %s, a flag the chart already writes from %s, so AIPerf would run with "
  "another value than the plan states; remove it and set that instead") $flag (get $ownedFlags $flag)) }}
{{- end }}
{{- end }}
{{- if eq .Values.runtime "dynamo" }}
{{- /* Rule: the 1.6 and 1.7 frontends answer 400 to nvext.ignore_eos (unknown field), which the 1.2.1 frontend took. */}}
{{- $line := include "gpt-oss.dynamoLine" . }}
{{- if ne $line "1.2" }}
{{- range .Values.benchmark.extraInputs }}
{{- if regexMatch `"nvext"\s*:\s*\{[^}]*"ignore_eos"` (toString .) }}
{{- fail (printf (print "benchmark.extraInputs has %s, but the Dynamo %s frontend refuses nvext.ignore_eos (400, unknown field) "
  "and every benchmark request fails; remove that entry and keep ignore_eos:true, which it accepts") (toString .) $line) }}
{{- end }}
{{- end }}
{{- end }}
{{- $w := .Values.workers }}
{{- $bench := .Values.benchmark }}
{{- range $row := include "gpt-oss.roleTable" . | fromJsonArray }}
{{- $role := get $w $row.key }}
{{- if $role.enabled }}
{{- $key := printf "workers.%s" $row.key }}
{{- if $bench.enabled }}
{{- $isl := int $bench.inputTokensMean }}
{{- $osl := int $bench.outputTokensMean }}
{{- $maxSeqLen := ternary 131072 (int $role.maxSeqLen) (kindIs "invalid" $role.maxSeqLen) }}
{{- $maxNumTokens := ternary 8192 (int $role.maxNumTokens) (kindIs "invalid" $role.maxNumTokens) }}
{{- $prefill := eq $row.mode "prefill" }}
{{- $needed := ternary $isl (add $isl $osl) $prefill }}
{{- /* Rule: a request's tokens (the prompt alone on prefill) fit maxSeqLen; two messages, with and without the output. */}}
{{- if gt $needed $maxSeqLen }}
{{- fail (printf "benchmark.inputTokensMean=%d%s = %d tokens exceed %s.maxSeqLen=%d; raise %s.maxSeqLen to at least %d or shorten the benchmark"
  $isl (ternary "" (printf " + benchmark.outputTokensMean=%d" $osl) $prefill) $needed $key $maxSeqLen $key $needed) }}
{{- end }}
{{- /* Rule: a prompt longer than maxNumTokens needs chunked prefill. */}}
{{- if and (ne $row.mode "decode") (gt $isl $maxNumTokens) (not (get (default dict $role.engine) "enable_chunked_prefill")) }}
{{- fail (printf (print "benchmark.inputTokensMean=%d exceeds %s.maxNumTokens=%d%s and chunked prefill is off: "
  "set %s.engine.enable_chunked_prefill=true or raise %s.maxNumTokens to at least %d")
  $isl $key $maxNumTokens (ternary " (the TensorRT-LLM default)" "" (kindIs "invalid" $role.maxNumTokens)) $key $key $isl) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
