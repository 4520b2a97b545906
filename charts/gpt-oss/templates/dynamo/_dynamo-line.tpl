{{- /* The Dynamo release line the chart renders for. */}}

{{/*
The selected Dynamo release line, "1.2", "1.6" or "1.7": dynamo.releaseLine (the values schema allows those three).
Usage: {{ $line := include "gpt-oss.dynamoLine" . }}
*/}}
{{- define "gpt-oss.dynamoLine" -}}
{{- toString .Values.dynamo.releaseLine }}
{{- end }}
