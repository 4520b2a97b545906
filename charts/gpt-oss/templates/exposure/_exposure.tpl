{{- /* Exposure: the Service an Ingress or HTTPRoute sends clients to, and how NOTES tells users to reach it. */}}

{{/*
The Service that serves the OpenAI API: the frontend Service the Dynamo operator creates (<dgd>-frontend,
port 8000, its DynamoServicePort) or the chart's trtllm-serve Service.
Usage: {{ $service := include "gpt-oss.servingService" . | fromYaml }}
*/}}
{{- define "gpt-oss.servingService" -}}
{{- if eq .Values.runtime "trtllm-serve" }}
name: {{ include "gpt-oss.trtllmServe.name" . }}
port: {{ int .Values.trtllmServe.httpPort }}
{{- else }}
name: {{ printf "%s-frontend" (include "gpt-oss.fullname" .) }}
port: 8000
{{- end }}
{{- end }}

{{/*
Lines telling users where to reach the API: the Ingress hosts, the HTTPRoute hostnames, else port-forward.
Usage: {{ include "gpt-oss.reachLines" . | nindent 3 }}
*/}}
{{- define "gpt-oss.reachLines" -}}
{{- $service := include "gpt-oss.servingService" . | fromYaml }}
{{- $lines := list }}
{{- if .Values.ingress.enabled }}
{{- range .Values.ingress.hosts }}
{{- $host := .host }}
{{- /* https where a TLS entry names the host, or names no host (then it covers them all). */}}
{{- $scheme := "http" }}
{{- range $.Values.ingress.tls }}{{ if or (not .hosts) (has $host .hosts) }}{{ $scheme = "https" }}{{ end }}{{ end }}
{{- $lines = append $lines (printf "Ingress: curl %s://%s%s/v1/models" $scheme $host (trimSuffix "/" (index .paths 0).path)) }}
{{- end }}
{{- end }}
{{- if .Values.httpRoute.enabled }}
{{- $target := ternary (printf "InferencePool %s" (include "gpt-oss.inferencePool.name" .)) (printf "Service %s" $service.name) .Values.inferencePool.enabled }}
{{- if .Values.httpRoute.hostnames }}
{{- range .Values.httpRoute.hostnames }}
{{- $lines = append $lines (printf "HTTPRoute %s (to %s): curl http://%s/v1/models through its Gateway" (include "gpt-oss.fullname" $) $target .) }}
{{- end }}
{{- else }}
{{- $lines = append $lines (printf "HTTPRoute %s (to %s): curl http://<gateway address>/v1/models" (include "gpt-oss.fullname" .) $target) }}
{{- end }}
{{- end }}
{{- if not $lines }}
{{- /* Step 2 of NOTES already prints the port-forward command. */}}
{{- $lines = append $lines (printf "No Ingress or HTTPRoute (ingress.enabled, httpRoute.enabled): reach svc/%s with the port-forward of step 2"
  $service.name) }}
{{- end }}
{{- toYaml $lines }}
{{- end }}
