{{- /* Graceful shutdown rules: the pods drain before they stop. */}}

{{/*
Graceful shutdown: the preStop wait must outlast the readiness probe's two tries (2 s apart, gpt-oss.drainHooks), or
a Service or picker that reads readiness could still send a request after SIGTERM, which the Dynamo 1.2.1 frontend
then fails (its /health stays 200 while it shuts down).
Usage: {{ include "gpt-oss.checkValues.gracefulShutdown" . }}
*/}}
{{- define "gpt-oss.checkValues.gracefulShutdown" -}}
{{- $g := .Values.gracefulShutdown }}
{{- /* Rule: preStopSeconds is 5 or more. */}}
{{- if lt (int $g.preStopSeconds) 5 }}
{{- fail (printf (print "gracefulShutdown.preStopSeconds=%d is shorter than the readiness probe needs to report the pod draining "
  "(two tries, 2 s apart) plus a moment for the endpoints to follow, so requests could still arrive after SIGTERM; allowed: 5 or "
  "more (15 by default; longer than your ingress controller's or gateway's endpoint refresh)") (int $g.preStopSeconds)) }}
{{- end }}
{{- end }}
