{{- /* Cross-field rules of the Dynamo release line (gpt-oss.dynamoLine). */}}

{{/*
Fails on values the selected release line's components refuse: the 1.6.1 frontend answers 400 to a request whose
nvext carries ignore_eos (unknown field; the e2e tier's benchmark on the dynamo-1.6 line), which the 1.2.1 frontend took.
Usage: {{ include "gpt-oss.checkDynamoLine" . }}
*/}}
{{- define "gpt-oss.checkDynamoLine" -}}
{{- if and (eq .Values.runtime "dynamo") (eq (include "gpt-oss.dynamoLine" .) "1.6") }}
{{- range .Values.benchmark.extraInputs }}
{{- if regexMatch `"nvext"\s*:\s*\{[^}]*"ignore_eos"` (toString .) }}
{{- fail (printf "benchmark.extraInputs has %s, but the Dynamo 1.6 frontend refuses nvext.ignore_eos (400, unknown field) and every benchmark request fails; remove that entry and keep ignore_eos:true, which it accepts" (toString .)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
