{{- /* Passthrough rules: what the API server refuses in values the chart passes into objects unchanged. */}}

{{/*
Passthroughs (issue 53): the values the chart copies into objects (resources, env, labels and annotations, node
selectors, tolerations, NetworkPolicy peers, Ingress and HTTPRoute hosts) are typed by the schema from the pinned Kubernetes OpenAPI
(ci/generate/kubernetes_schema.py); these are the API server's rules a schema cannot word with the key named: map keys
(Helm's validator reports a bad property name at '', not at its map), requests at most limits, a toleration's fields
together, CIDRs in canonical form, an IP address as a host. The patterns are the pinned apimachinery's (_kubernetes-patterns.tpl, generated).
Usage: {{ include "gpt-oss.checkValues.passthroughs" . }}
*/}}
{{- define "gpt-oss.checkValues.passthroughs" -}}
{{- $patterns := include "gpt-oss.kubernetesPatterns" . | fromJson }}
{{- $v := .Values }}
{{- /* Resource names the API server takes: standard ones, or a domain-qualified (extended) name. */}}
{{- $_ := set $patterns "resourceName" (print "^(cpu|memory|ephemeral-storage|hugepages-[0-9A-Za-z.]+|"
  "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])$") }}
{{- $allowed := dict
  "envVarName" "letters, digits, '_', '-' and '.', not starting with a digit (the API server's [-._a-zA-Z][-._a-zA-Z0-9]*)"
  "qualifiedName" (print "a label key: an optional DNS-1123 prefix and '/', then at most 63 letters, digits, '-', '_' or '.', "
    "beginning and ending with a letter or digit (app.kubernetes.io/name, team)")
  "resourceName" "cpu, memory, ephemeral-storage, hugepages-<size>, or a domain-qualified extended resource such as rdma/ib or example.com/foo" }}
{{- $resources := dict "modelCache.download" $v.modelCache.download.resources "modelCache.verify" $v.modelCache.verify.resources
  "frontend" $v.frontend.resources "workers" $v.workers.resources "trtllmServe" $v.trtllmServe.resources
  "benchmark" $v.benchmark.resources "smokeTest" $v.smokeTest.resources
  "inferencePool.endpointPicker" $v.inferencePool.endpointPicker.resources "planner" $v.planner.resources }}
{{- /* Every render has these: no pattern to compile for them. */}}
{{- $standardResources := list "cpu" "memory" "ephemeral-storage" "nvidia.com/gpu" }}
{{- $maps := list }}
{{- range $path, $env := dict "workers.env" $v.workers.env "workers.worker.env" $v.workers.worker.env
  "workers.prefill.env" $v.workers.prefill.env "workers.decode.env" $v.workers.decode.env "trtllmServe.env" $v.trtllmServe.env }}
{{- $maps = append $maps (dict "path" $path "map" $env "kind" "envVarName") }}
{{- end }}
{{- range $path, $labels := dict "modelCache.download.nodeSelector" $v.modelCache.download.nodeSelector
  "workers.nodeSelector" $v.workers.nodeSelector "trtllmServe.nodeSelector" $v.trtllmServe.nodeSelector
  "monitoring.podMonitor.labels" $v.monitoring.podMonitor.labels "monitoring.dashboard.labels" $v.monitoring.dashboard.labels
  "monitoring.prometheusRule.labels" $v.monitoring.prometheusRule.labels "httpRoute.labels" $v.httpRoute.labels
  "monitoring.dashboard.annotations" $v.monitoring.dashboard.annotations "ingress.annotations" $v.ingress.annotations
  "httpRoute.annotations" $v.httpRoute.annotations
  "modelCache.s3.serviceAccount.annotations" $v.modelCache.s3.serviceAccount.annotations }}
{{- $maps = append $maps (dict "path" $path "map" $labels "kind" "qualifiedName") }}
{{- end }}
{{- range $component, $res := $resources }}
{{- range $kind := list "requests" "limits" }}
{{- $maps = append $maps (dict "path" (printf "%s.resources.%s" $component $kind) "map" (dig $kind dict (default dict $res)) "kind" "resourceName") }}
{{- end }}
{{- end }}
{{- range $maps }}
{{- $map := .map }}
{{- $kind := .kind }}
{{- $path := .path }}
{{- range $key := keys (default dict $map) | sortAlpha }}
{{- /* Rule: env var names, label and annotation keys and resource names are names the API server takes. */}}
{{- if and (not (and (eq $kind "resourceName") (has $key $standardResources))) (not (regexMatch (get $patterns $kind) $key)) }}
{{- fail (printf "%s has the key %q, which the API server refuses there; allowed: %s" $path $key (get $allowed $kind)) }}
{{- end }}
{{- end }}
{{- end }}
{{- range $component, $res := $resources }}
{{- $requests := dig "requests" dict (default dict $res) }}
{{- $limits := dig "limits" dict (default dict $res) }}
{{- /* Each quantity parsed once: "requests/<name>" and "limits/<name>" -> its millis. */}}
{{- $millis := dict }}
{{- range $kind, $quantities := dict "requests" $requests "limits" $limits }}
{{- range $name, $quantity := $quantities }}
{{- $m := include "gpt-oss.quantityMillis" $quantity }}
{{- $_ := set $millis (printf "%s/%s" $kind $name) $m }}
{{- /* Rule: a request or limit is a quantity resource.ParseQuantity reads (the schema's pattern lets 1e1.5 through). */}}
{{- if not $m }}
{{- fail (printf (print "%s.resources.%s.%s=%v is not a Kubernetes quantity; allowed: a number with an optional suffix "
  "m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an integer exponent (500m, 2, 1.5, 16Gi, 1e3)") $component $kind $name $quantity) }}
{{- end }}
{{- end }}
{{- end }}
{{- range $name, $request := $requests }}
{{- $limit := get $limits $name }}
{{- $overcommit := has $name (list "cpu" "memory" "ephemeral-storage") }}
{{- $requested := float64 (get $millis (printf "requests/%s" $name)) }}
{{- $limited := float64 (default "" (get $millis (printf "limits/%s" $name))) }}
{{- /* Rule: a request is at most its limit (cpu, memory, ephemeral-storage: the resources Kubernetes overcommits). */}}
{{- if and $overcommit (hasKey $limits $name) (gt $requested $limited) }}
{{- fail (printf (print "%s.resources.requests.%s=%v is more than %s.resources.limits.%s=%v: the API server refuses a "
  "request above its limit; allowed: a request at most the limit, or no limit") $component $name $request $component $name $limit) }}
{{- end }}
{{- /* Rule: an extended resource (nvidia.com/*, rdma/*) or hugepages is not overcommitted: a limit, equal to the request. */}}
{{- if and (not $overcommit) (or (not (hasKey $limits $name)) (ne $requested $limited)) }}
{{- fail (printf (print "%s.resources.requests.%s=%v needs %s.resources.limits.%s equal to it (it is %s): Kubernetes does "
  "not overcommit extended resources and hugepages, and the API server refuses a request without an equal limit; allowed: "
  "the same quantity in both, or only the limit (the request then defaults to it)") $component $name $request $component
  $name (ternary (printf "%v" $limit) "not set" (hasKey $limits $name))) }}
{{- end }}
{{- end }}
{{- end }}
{{- range $component, $tolerations := dict "modelCache.download" $v.modelCache.download.tolerations
  "workers" $v.workers.tolerations "trtllmServe" $v.trtllmServe.tolerations }}
{{- range $index, $t := $tolerations }}
{{- $key := default "" $t.key }}
{{- $operator := default "Equal" $t.operator }}
{{- $value := toString (default "" $t.value) }}
{{- $problem := "" }}
{{- if and $key (not (regexMatch $patterns.qualifiedName $key)) }}
{{- $problem = printf "key %q is not a label key; allowed: %s" $key (get $allowed "qualifiedName") }}
{{- else if and (not $key) (ne $operator "Exists") }}
{{- $problem = "an empty key needs operator Exists (match every taint); allowed: a key, or operator: Exists" }}
{{- else if and (hasKey $t "tolerationSeconds") (ne (default "" $t.effect) "NoExecute") }}
{{- $problem = "tolerationSeconds applies to effect NoExecute only; allowed: effect: NoExecute, or no tolerationSeconds" }}
{{- else if and (eq $operator "Exists") $value }}
{{- $problem = printf "value %q with operator Exists, which matches any value; allowed: no value, or operator: Equal" $value }}
{{- else if and (eq $operator "Equal") (not (regexMatch $patterns.labelValue $value)) }}
{{- $problem = printf (print "value %q is not a label value; allowed: at most 63 letters, digits, '-', '_' or '.', "
  "beginning and ending with a letter or digit") $value }}
{{- end }}
{{- /* Rule: a toleration is one the API server takes (ValidateTolerations). */}}
{{- if $problem }}
{{- fail (printf "%s.tolerations[%d] is refused by the API server: %s" $component $index $problem) }}
{{- end }}
{{- end }}
{{- end }}
{{- $np := $v.networkPolicy }}
{{- $peers := list }}
{{- range $path, $list := dict "networkPolicy.clients" $np.clients "networkPolicy.dns.to" $np.dns.to
  "networkPolicy.apiServer.to" $np.apiServer.to "networkPolicy.nats.to" $np.nats.to "networkPolicy.etcd.to" $np.etcd.to
  "networkPolicy.prometheus.to" $np.prometheus.to "networkPolicy.downloadEgressTo" $np.downloadEgressTo }}
{{- range $index, $peer := $list }}
{{- $peers = append $peers (dict "path" (printf "%s[%d]" $path $index) "peer" $peer) }}
{{- end }}
{{- end }}
{{- range $rule, $egress := $np.dynamoPlatformEgress }}
{{- range $index, $peer := $egress.to }}
{{- $peers = append $peers (dict "path" (printf "networkPolicy.dynamoPlatformEgress[%d].to[%d]" $rule $index) "peer" $peer) }}
{{- end }}
{{- end }}
{{- range $peers }}
{{- $path := .path }}
{{- $ipBlock := dig "ipBlock" dict .peer }}
{{- $cidrs := dict }}
{{- if hasKey $ipBlock "cidr" }}{{ $_ := set $cidrs (printf "%s.ipBlock.cidr" $path) $ipBlock.cidr }}{{ end }}
{{- range $index, $except := $ipBlock.except }}{{ $_ := set $cidrs (printf "%s.ipBlock.except[%d]" $path $index) $except }}{{ end }}
{{- range $key, $cidr := $cidrs }}
{{- /* Rule: a CIDR is IPv4 or IPv6 as the API server parses it strictly: no leading zeros, lower-case hexadecimal. */}}
{{- if not (regexMatch $patterns.cidr $cidr) }}
{{- fail (printf (print "%s=%s is not a CIDR the API server takes; allowed: an IPv4 CIDR such as 10.0.0.0/8 or an IPv6 "
  "CIDR such as fd00::/8, in canonical form (no leading zeros, lower-case hexadecimal, the prefix length after /)") $key $cidr) }}
{{- end }}
{{- $range := include "gpt-oss.ipv4Range" $cidr | fromJson }}
{{- /* Rule: an IPv4 CIDR has no bits set beyond its prefix (the API server warns it is ambiguous). */}}
{{- if and $range (ne $range.network $range.address) }}
{{- fail (printf (print "%s=%s has bits set beyond its /%d prefix, which the API server calls ambiguous: %s/%d (the "
  "network) or %s/32 (the one address)?; allowed: the CIDR in canonical form") $key $cidr (int $range.prefix) $range.networkText
  (int $range.prefix) (first (splitList "/" $cidr))) }}
{{- end }}
{{- end }}
{{- $outer := include "gpt-oss.ipv4Range" (default "" $ipBlock.cidr) | fromJson }}
{{- range $index, $except := $ipBlock.except }}
{{- $inner := include "gpt-oss.ipv4Range" $except | fromJson }}
{{- $inside := and $outer $inner (gt $inner.prefix $outer.prefix) (ge $inner.network $outer.network)
  (lt $inner.network (addf $outer.network $outer.size)) }}
{{- /* Rule: each except is a strict subset of its cidr (IPv4 and mixed families; the API server refuses it otherwise). */}}
{{- if and (not $inside) (or $outer $inner (ne (contains ":" $except) (contains ":" (default "" $ipBlock.cidr)))) }}
{{- fail (printf (print "%s.ipBlock.except[%d]=%s is not inside %s.ipBlock.cidr=%s: the API server refuses an except that is "
  "not a strict subset of its cidr; allowed: a CIDR within %s with a longer prefix") $path $index $except $path
  (default "" $ipBlock.cidr) (default "" $ipBlock.cidr)) }}
{{- end }}
{{- end }}
{{- end }}
{{- range $index, $host := $v.ingress.hosts }}
{{- range $pathIndex, $entry := $host.paths }}
{{- if ne (default "Prefix" $entry.pathType) "ImplementationSpecific" }}
{{- /* invalidPathSequences and invalidPathSuffixes of the API server's networking validation */}}
{{- $bad := list }}
{{- range list "//" "/./" "/../" "%2f" "%2F" }}{{ if contains . $entry.path }}{{ $bad = append $bad (printf "contains %s" .) }}{{ end }}{{ end }}
{{- range list "/.." "/." }}{{ if hasSuffix . $entry.path }}{{ $bad = append $bad (printf "ends with %s" .) }}{{ end }}{{ end }}
{{- /* Rule: a Prefix or Exact Ingress path has no empty, . or .. segment and no encoded slash. */}}
{{- if $bad }}
{{- fail (printf (print "ingress.hosts[%d].paths[%d].path=%s %s, which the API server refuses for pathType %s; allowed: an "
  "absolute path without //, /./, /../, %%2f or a trailing /. or /.. (e.g. /v1), or pathType ImplementationSpecific")
  $index $pathIndex $entry.path (join " and " $bad) (default "Prefix" $entry.pathType)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- $hosts := dict }}
{{- range $index, $host := $v.ingress.hosts }}{{ $_ := set $hosts (printf "ingress.hosts[%d].host" $index) $host.host }}{{ end }}
{{- range $index, $host := $v.httpRoute.hostnames }}{{ $_ := set $hosts (printf "httpRoute.hostnames[%d]" $index) $host }}{{ end }}
{{- range $key, $host := $hosts }}
{{- /* Rule: an Ingress or HTTPRoute host is a DNS name, not an IP address (the schema's DNS pattern lets 10.0.0.1 pass). */}}
{{- if regexMatch "^[0-9]+(\\.[0-9]+){3}$" $host }}
{{- fail (printf (print "%s=%s is an IP address; an Ingress rule's host and an HTTPRoute hostname are DNS names (the API "
  "server and Gateway API refuse IPs); allowed: a lower-case DNS name such as gpt-oss.example.com, or *.example.com") $key $host) }}
{{- end }}
{{- end }}
{{- end }}
