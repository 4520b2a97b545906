{{- /* Live objects of the release, read with lookup (empty under helm template and Argo CD). */}}

{{/*
The live DynamoGraphDeployment of this release: toJson of the object named as the chart names it, in the
release namespace, read in the chosen dynamo.apiVersion (the API server converts), or {} when absent.
Usage: {{ $live := include "gpt-oss.liveDGD" . | fromJson }}
*/}}
{{- define "gpt-oss.liveDGD" -}}
{{- $live := dict }}
{{- /* Only where the API serves the kind: lookup of an unknown kind fails instead of returning nothing. */}}
{{- if .Capabilities.APIVersions.Has (printf "%s/DynamoGraphDeployment" .Values.dynamo.apiVersion) }}
{{- $live = lookup .Values.dynamo.apiVersion "DynamoGraphDeployment" .Release.Namespace (include "gpt-oss.fullname" .) | default dict }}
{{- end }}
{{- toJson $live }}
{{- end }}
