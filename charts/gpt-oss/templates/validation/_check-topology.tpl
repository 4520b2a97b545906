{{- /* Topology rules (runtime dynamo): which worker roles run, aggregated or disaggregated. */}}

{{/*
Topology (runtime dynamo): aggregated (workers.worker) or disaggregated (prefill + decode), never both.
Usage: {{ include "gpt-oss.checkValues.topology" . }}
*/}}
{{- define "gpt-oss.checkValues.topology" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $w := .Values.workers }}
{{- /* Rule: aggregated or disaggregated, never both. */}}
{{- if and $w.worker.enabled (or $w.prefill.enabled $w.decode.enabled) }}
{{- fail (printf (print "workers.worker.enabled is true together with workers.prefill.enabled=%v / workers.decode.enabled=%v: "
  "choose aggregated (worker only) or disaggregated (prefill and decode)") $w.prefill.enabled $w.decode.enabled) }}
{{- end }}
{{- /* Rule: at least one worker role. */}}
{{- if not (or $w.worker.enabled $w.prefill.enabled $w.decode.enabled) }}
{{- fail (print "no worker role is enabled: set workers.worker.enabled=true (aggregated) or workers.prefill.enabled=true "
  "and workers.decode.enabled=true (disaggregated)") }}
{{- end }}
{{- /* Rule: disaggregated needs prefill and decode both. */}}
{{- if and (not $w.worker.enabled) (ne $w.prefill.enabled $w.decode.enabled) }}
{{- fail (printf (print "a disaggregated deployment needs both roles: workers.prefill.enabled=%v, workers.decode.enabled=%v; "
  "enable both, or use workers.worker alone") $w.prefill.enabled $w.decode.enabled) }}
{{- end }}
{{- end }}
{{- end }}
