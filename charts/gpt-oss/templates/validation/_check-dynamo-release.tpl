{{- /* Dynamo release checks: the DGD API the chart writes, the release line and its runtime versions. */}}

{{/*
Refuses values outside the Dynamo releases the chart renders for (runtime dynamo only).
Usage: {{ include "gpt-oss.checkDynamoRelease" . }}
*/}}
{{- define "gpt-oss.checkDynamoRelease" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- /* Rule: the chart writes nvidia.com/v1beta1 only; v1alpha1 was retired (every release line serves v1beta1). */}}
{{- if eq .Values.dynamo.apiVersion "nvidia.com/v1alpha1" }}
{{- fail "dynamo.apiVersion=nvidia.com/v1alpha1 was retired: every Dynamo release this chart renders for serves nvidia.com/v1beta1 (from 1.2.0), and from 1.5.0 the operator validates DGDs at v1beta1 only and stores them as v1beta1; set dynamo.apiVersion=nvidia.com/v1beta1 (the default), or remove the key" }}
{{- end }}
{{- $release := include "gpt-oss.dynamoRelease" . | fromYaml }}
{{- $version := (include "gpt-oss.dynamoRuntimeVersion" . | fromYaml).version }}
{{- $range := $release.runtime }}
{{- /* Rule: the runtime is one the line's shape runs (no version at all is refused by dynamoAdmission). */}}
{{- if and $version (not (semverCompare (printf ">=%s-0, <%s-0" $range.from $range.below) $version)) }}
{{- fail (printf "dynamo.releaseLine=%s renders for Dynamo %s up to (not including) %s, but the runtime is %s (dynamo.runtimeVersionOverride, else dynamo.image.tag); allowed: dynamo.releaseLine=1.2 for runtimes 1.2.0 to 1.4.x, 1.6 for 1.5.0 to 1.6.x, and dynamo.image.tag empty for the line's own %s" $release.line $range.from $range.below $version $range.tag) }}
{{- end }}
{{- /* Rule: workers env leaves the operator's injected variables alone (its probes use the system port). */}}
{{- range $key := list "worker" "prefill" "decode" "" }}
{{- $env := ternary $.Values.workers.env (get (get $.Values.workers $key | default dict) "env" | default dict) (eq $key "") }}
{{- range $name := $release.operatorDefaults.reservedEnv }}
{{- if hasKey (default dict $env) $name }}
{{- fail (printf "%s.%s is set, but the Dynamo operator sets %s on every worker (%d) and points the probes it adds at it, so the pods would never be ready; remove it (the operator's variables: %s)" (ternary "workers.env" (printf "workers.%s.env" $key) (eq $key "")) $name $name (int $release.operatorDefaults.systemPort) (join ", " $release.operatorDefaults.reservedEnv)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
