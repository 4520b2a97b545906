{{- /* Disruption rules: one budget limit, and budgets that let a node drain. */}}

{{/*
Disruption budgets: one limit, and one that lets a node drain.
Usage: {{ include "gpt-oss.checkValues.disruption" . }}
*/}}
{{- define "gpt-oss.checkValues.disruption" -}}
{{- $w := .Values.workers }}
{{- $pdb := .Values.podDisruptionBudget }}
{{- if $pdb.enabled }}
{{- $maxSet := not (kindIs "invalid" $pdb.maxUnavailable) }}
{{- $minSet := not (kindIs "invalid" $pdb.minAvailable) }}
{{- /* Rule: a budget takes minAvailable or maxUnavailable, not both. */}}
{{- if and $maxSet $minSet }}
{{- fail (printf (print "podDisruptionBudget.minAvailable=%d and podDisruptionBudget.maxUnavailable=%d are both set, but a "
  "PodDisruptionBudget takes one of them: set podDisruptionBudget.maxUnavailable=null to use minAvailable, or "
  "podDisruptionBudget.minAvailable=null") (int $pdb.minAvailable) (int $pdb.maxUnavailable)) }}
{{- end }}
{{- /* Rule: a budget takes one of them. */}}
{{- if not (or $maxSet $minSet) }}
{{- fail (print "podDisruptionBudget.enabled=true needs podDisruptionBudget.maxUnavailable (default 1) or "
  "podDisruptionBudget.minAvailable; set one, or podDisruptionBudget.enabled=false") }}
{{- end }}
{{- /* Rule: maxUnavailable allows an eviction. */}}
{{- if and $maxSet (eq (int $pdb.maxUnavailable) 0) }}
{{- fail (print "podDisruptionBudget.maxUnavailable=0 never allows an eviction, so a node drain would hang forever; "
  "allowed: 1 or more, or podDisruptionBudget.enabled=false") }}
{{- end }}
{{- if $minSet }}
{{- $replicas := dict }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $_ := set $replicas "trtllmServe.replicas" (int .Values.trtllmServe.replicas) }}
{{- else }}
{{- $_ := set $replicas "frontend.replicas" (int .Values.frontend.replicas) }}
{{- range $key := list "worker" "prefill" "decode" }}
{{- if (get $w $key).enabled }}
{{- $_ := set $replicas (printf "workers.%s.replicas" $key) (int (get $w $key).replicas) }}
{{- end }}
{{- end }}
{{- end }}
{{- range $key := keys $replicas | sortAlpha }}
{{- $n := get $replicas $key }}
{{- /* Rule: minAvailable is below every role's replicas. */}}
{{- if ge (int $pdb.minAvailable) $n }}
{{- fail (printf (print "podDisruptionBudget.minAvailable=%d is not below %s=%d, so that role's budget would never allow an "
  "eviction and a node drain would hang forever; allowed: podDisruptionBudget.minAvailable below every role's replicas, or "
  "podDisruptionBudget.maxUnavailable instead") (int $pdb.minAvailable) $key $n) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
