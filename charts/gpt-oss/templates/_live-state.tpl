{{- /* The live state of the release in the cluster, read with lookup (empty offline: helm template, --dry-run, lint). */}}

{{/*
The live DynamoGraphDeployment of this release (named as the chart names it, in the release namespace,
in the chosen dynamo.apiVersion), as JSON; {} when it does not exist or nothing can be looked up.
Usage: {{ $live := include "gpt-oss.liveDGD" . | fromJson }}
*/}}
{{- define "gpt-oss.liveDGD" -}}
{{- $live := lookup .Values.dynamo.apiVersion "DynamoGraphDeployment" .Release.Namespace (include "gpt-oss.fullname" .) }}
{{- toJson (default dict $live) }}
{{- end }}
