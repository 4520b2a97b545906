{{- /* Exposure rules: routes that are served, and the upstream endpoint picker only where it fits. */}}

{{/*
Exposure: an Ingress with hosts, an HTTPRoute with a parent, the upstream endpoint picker only for trtllm-serve.
Usage: {{ include "gpt-oss.checkValues.exposure" . }}
*/}}
{{- define "gpt-oss.checkValues.exposure" -}}
{{- /* Rule: an Ingress has at least one host. */}}
{{- if and .Values.ingress.enabled (not .Values.ingress.hosts) }}
{{- fail (print "ingress.enabled=true needs at least one ingress.hosts entry ({host, paths: [{path: /, pathType: Prefix}]}): "
  "an Ingress without a host rule would take every host of its class; set ingress.hosts, or ingress.enabled=false") }}
{{- end }}
{{- /* Rule: an HTTPRoute has at least one parent. */}}
{{- if and .Values.httpRoute.enabled (not .Values.httpRoute.parentRefs) }}
{{- fail (print "httpRoute.enabled=true needs at least one httpRoute.parentRefs entry (the Gateway to attach to, e.g. "
  "{name: inference-gateway, namespace: gateway-system}): a route without a parent is never served; set httpRoute.parentRefs, "
  "or httpRoute.enabled=false") }}
{{- end }}
{{- /* Rule: the upstream endpoint picker only for runtime=trtllm-serve. */}}
{{- if and .Values.inferencePool.enabled (ne .Values.runtime "trtllm-serve") }}
{{- fail (print "inferencePool.enabled=true renders the upstream endpoint picker for runtime=trtllm-serve, but runtime=dynamo: "
  "Dynamo has its own endpoint picker (a DynamoGraphDeployment component of type epp, see Dynamo's docs/kubernetes/gateway-api), "
  "which this chart does not render because its Dynamo 1.2.x packaging is unconfirmed; set inferencePool.enabled=false "
  "(httpRoute then routes to the frontend), or runtime=trtllm-serve") }}
{{- end }}
{{- end }}
