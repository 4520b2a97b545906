{{- /* Security rules: what values may give pods, images pinned on request, no credentials in URLs, network egress named. */}}

{{/*
Security (docs/security.md): no privilege beyond the restricted Pod Security profile unless security.allowPrivileged,
every image pinned by digest under security.requireImageDigests, no credentials in a URL (a Secret holds a proxy's),
and NetworkPolicies that name the Kubernetes API's peers when a pod of the release calls it.
Usage: {{ include "gpt-oss.checkValues.security" . }}
*/}}
{{- define "gpt-oss.checkValues.security" -}}
{{- $grants := include "gpt-oss.privilegeGrants" . | fromYamlArray }}
{{- /* Rule: securityContext gives no privilege, root or capability unless security.allowPrivileged says so. */}}
{{- if and $grants (not .Values.security.allowPrivileged) }}
{{- fail (printf (print "securityContext gives every pod the chart defines more than the restricted Pod Security profile "
  "allows: %s; allowed: the defaults (UID 1000, runAsNonRoot, allowPrivilegeEscalation=false, capabilities.drop=[ALL], "
  "RuntimeDefault seccomp), or security.allowPrivileged=true to render them anyway (NOTES and tools/plan.py then warn)")
  (join ", " $grants)) }}
{{- end }}
{{- if .Values.security.requireImageDigests }}
{{- $unpinned := list }}
{{- range include "gpt-oss.images" . | fromYamlArray }}
{{- if not (regexMatch "@sha256:[0-9a-f]{64}$" .image) }}{{ $unpinned = append $unpinned (printf "%s (%s)" .key .image) }}{{ end }}
{{- end }}
{{- /* Rule: under security.requireImageDigests every image the release runs is pinned by digest. */}}
{{- if $unpinned }}
{{- fail (printf (print "security.requireImageDigests=true, but these images are not pinned by digest: %s; allowed: a tag "
  "of the form <tag>@sha256:<64 hex> or sha256:<64 hex> in each (docs/security.md, \"Pinning images\"), or "
  "security.requireImageDigests=false") (join ", " ($unpinned | uniq))) }}
{{- end }}
{{- end }}
{{- $mc := .Values.modelCache }}
{{- $urls := dict "modelCache.proxy.httpsProxy" $mc.proxy.httpsProxy "modelCache.proxy.httpProxy" $mc.proxy.httpProxy
  "modelCache.huggingface.endpoint" $mc.huggingface.endpoint "modelCache.s3.endpoint" $mc.s3.endpoint
  "modelCache.oci.tokenService" $mc.oci.tokenService "model.tiktoken.url" .Values.model.tiktoken.url
  "frontend.urlOverride" .Values.frontend.urlOverride "planner.prometheusEndpoint" .Values.planner.prometheusEndpoint
  "frontend.autoscaling.prometheusAddress" .Values.frontend.autoscaling.prometheusAddress
  "workers.worker.autoscaling.prometheusAddress" .Values.workers.worker.autoscaling.prometheusAddress
  "workers.prefill.autoscaling.prometheusAddress" .Values.workers.prefill.autoscaling.prometheusAddress
  "workers.decode.autoscaling.prometheusAddress" .Values.workers.decode.autoscaling.prometheusAddress
  "trtllmServe.autoscaling.prometheusAddress" .Values.trtllmServe.autoscaling.prometheusAddress }}
{{- range $key := keys $urls | sortAlpha }}
{{- $url := urlParse (get $urls $key) }}
{{- /* Rule: no URL carries credentials (user:password@): values and rendered objects are not secret. */}}
{{- if $url.userinfo }}
{{- fail (printf (print "%s=%s://***@%s has credentials in it (user:password@): they would be stored in plain text in the "
  "release and in every object that carries the URL; allowed: the URL without them (a proxy that needs them: "
  "modelCache.proxy.existingSecret, a Secret holding the whole URL)") $key $url.scheme $url.host) }}
{{- end }}
{{- end }}
{{- /* Rule: the proxy comes from a Secret or from values, not both. */}}
{{- if and $mc.proxy.existingSecret (or $mc.proxy.httpsProxy $mc.proxy.httpProxy) }}
{{- fail (printf (print "modelCache.proxy.existingSecret=%s and modelCache.proxy.httpsProxy=%q / httpProxy=%q are both set: "
  "the Job would get HTTPS_PROXY and HTTP_PROXY twice; keep one: the Secret (its keys HTTPS_PROXY and HTTP_PROXY), or the "
  "values and modelCache.proxy.existingSecret=\"\"") $mc.proxy.existingSecret $mc.proxy.httpsProxy $mc.proxy.httpProxy) }}
{{- end }}
{{- $np := .Values.networkPolicy }}
{{- $callers := "" }}
{{- if eq .Values.runtime "dynamo" }}{{ $callers = "the Dynamo frontend, workers and planner call it (discovery, scaling)" }}{{ end }}
{{- if and (eq .Values.runtime "trtllm-serve") .Values.inferencePool.enabled }}{{ $callers = "the endpoint picker calls it" }}{{ end }}
{{- /* Rule: NetworkPolicies open the Kubernetes API only to the peers the values name. */}}
{{- if and $np.enabled $callers (not $np.apiServer.to) }}
{{- fail (printf (print "networkPolicy.enabled=true needs networkPolicy.apiServer.to, the Kubernetes API's peers: %s, and the "
  "chart opens that egress only to the peers you name (the API server's endpoints are no pods: kubectl get endpointslices "
  "-n default -l kubernetes.io/service-name=kubernetes); allowed: NetworkPolicyPeers, e.g. [{ipBlock: {cidr: 10.0.0.10/32}}]")
  $callers) }}
{{- end }}
{{- end }}
