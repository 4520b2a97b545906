{{- /* Security rules: what values may give pods, images pinned on request, a proxy given one way, network egress named. */}}

{{/*
Security (docs/security.md): no privilege beyond the restricted Pod Security profile unless security.allowPrivileged,
every image pinned by digest under security.requireImageDigests, a proxy from a Secret or from values (credentials
in a URL: gpt-oss.checkValues.urls), and NetworkPolicies that name the Kubernetes API's peers when a pod of the release calls it.
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
{{- $readers := list }}
{{- if .Values.monitoring.podMonitor.enabled }}{{ $readers = append $readers "monitoring.podMonitor.enabled=true (it scrapes the serving pods)" }}{{ end }}
{{- if and (eq .Values.runtime "dynamo") .Values.planner.enabled }}{{ $readers = append $readers "planner.enabled=true (the planner reads it)" }}{{ end }}
{{- /* Rule: with the policies on, Prometheus is a peer the values name, when a PodMonitor or the planner needs it. */}}
{{- if and $np.enabled $readers (not $np.prometheus.to) }}
{{- fail (printf (print "networkPolicy.enabled=true with %s needs networkPolicy.prometheus.to, Prometheus' peers, each naming "
  "its namespace; allowed: NetworkPolicyPeers such as [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: "
  "monitoring}}, podSelector: {matchLabels: {app.kubernetes.io/name: prometheus}}}]") (join " and " $readers)) }}
{{- end }}
{{- /* Rule: a Prometheus peer names its namespace: the metrics it reaches share the API port. */}}
{{- if $np.enabled }}
{{- range $index, $peer := $np.prometheus.to }}
{{- $named := dig "namespaceSelector" "matchLabels" "kubernetes.io/metadata.name" "" $peer }}
{{- $selectsNamespaces := hasKey $peer "namespaceSelector" }}
{{- if not (or (hasKey $peer "ipBlock") (and $selectsNamespaces $named) (and (not $selectsNamespaces) (hasKey $peer "podSelector"))) }}
{{- fail (printf (print "networkPolicy.prometheus.to[%d] names no namespace: %s; a pod of any namespace that carries these "
  "labels would reach the metrics ports, and the frontend's and trtllm-serve's metrics share their API port; allowed: a "
  "namespaceSelector with matchLabels kubernetes.io/metadata.name: <Prometheus' namespace> (beside a podSelector), a "
  "podSelector alone (the release's namespace), or an ipBlock") $index (toJson $peer)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
