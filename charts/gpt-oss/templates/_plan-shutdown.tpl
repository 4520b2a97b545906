{{- /* Graceful shutdown of the serving pods: the grace period the plan computes, and the drain hooks that use it. */}}

{{/*
Graceful shutdown of every serving pod (trtllm-serve, the Dynamo frontend and workers), from gracefulShutdown:
the preStop wait, the longest request the deployment lets finish, the exit allowance, and the pod's
terminationGracePeriodSeconds, computed here and nowhere else:
  terminationGracePeriodSeconds = preStopSeconds + maxRequestSeconds + exitSeconds (30: the server's own exit after
  its last request, e.g. TensorRT-LLM freeing its engines; a SIGKILL then drops no request).
Usage: {{ $shutdown := index . (include "gpt-oss.object" (list "gpt-oss.gracefulShutdown" .)) }}
*/}}
{{- define "gpt-oss.gracefulShutdown" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeGracefulShutdown" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.gracefulShutdown, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeGracefulShutdown" . }} (templates read it through gpt-oss.gracefulShutdown)
*/}}
{{- define "gpt-oss.computeGracefulShutdown" -}}
{{- $g := .Values.gracefulShutdown }}
{{- $exitSeconds := 30 }}
{{- $grace := add (int $g.preStopSeconds) (int $g.maxRequestSeconds) $exitSeconds }}
preStopSeconds: {{ int $g.preStopSeconds }}
maxRequestSeconds: {{ int $g.maxRequestSeconds }}
exitSeconds: {{ $exitSeconds }}
terminationGracePeriodSeconds: {{ $grace }}
formula: {{ printf "%d = preStopSeconds %d + maxRequestSeconds %d + exitSeconds %d"
  $grace (int $g.preStopSeconds) (int $g.maxRequestSeconds) $exitSeconds | quote }}
{{- end }}

{{/*
The drain hooks of a serving container (port: its HTTP port; model: the name it serves): a preStop that marks the pod
draining and waits gracefulShutdown.preStopSeconds before the kubelet sends SIGTERM, and a readiness probe,
files/readiness_probe.py, that fails as soon as the mark exists (two probes 2 s apart), before the server stops or
refuses anything; otherwise it is Ready once /v1/models lists the model (the Dynamo 1.2.1 frontend's /health answers
200 "healthy" before any worker has registered, and then a request would fail with "model not found").
Kubernetes takes a terminating pod out of its Service's ready endpoints at once; the wait covers the time kube-proxy,
ingress controllers and endpoint pickers take to notice, and the failing probe tells those that read readiness
(EndpointSlice `serving`, pod conditions). Needs /bin/sh and python3 in the image (every image the chart runs has them)
and the scripts volume mounted at /opt/gpt-oss/scripts (gpt-oss.scriptsVolume).
Usage: {{ include "gpt-oss.drainHooks" (dict "root" . "port" 8000 "model" "openai/gpt-oss-120b") | nindent 10 }}
*/}}
{{- define "gpt-oss.drainHooks" -}}
{{- $shutdown := index .root (include "gpt-oss.object" (list "gpt-oss.gracefulShutdown" .root)) }}
{{- $marker := "/tmp/gpt-oss-draining" }}
lifecycle:
  preStop:
    exec:
      command: ["/bin/sh", "-c", {{ printf "touch %s; sleep %d" $marker (int $shutdown.preStopSeconds) | quote }}]
readinessProbe:
  exec:
    command: ["python3", "/opt/gpt-oss/scripts/readiness_probe.py", {{ $marker | quote }}, {{ int .port | quote }}, {{ .model | quote }}]
  periodSeconds: 2
  timeoutSeconds: 3
  failureThreshold: 2
{{- end }}
