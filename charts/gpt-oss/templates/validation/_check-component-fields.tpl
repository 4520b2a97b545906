{{- /* Component field rules (runtime dynamo): only the fields of a v1beta1 DGD component, never the chart's own. */}}

{{/*
Extra component fields (runtime dynamo): only those of a v1beta1 DGD component, never the chart's own.
Usage: {{ include "gpt-oss.checkValues.componentFields" . }}
*/}}
{{- define "gpt-oss.checkValues.componentFields" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $owned := list "name" "type" "replicas" "podTemplate" "sharedMemorySize" "runtimeVersionOverride" }}
{{- $allowed := list "minAvailable" "compilationCache" "modelRef" "scalingAdapter" "globalDynamoNamespace" "topologyConstraint"
  "providerOverride" "experimental" }}
{{- range $field, $_ := .Values.workers.componentFields }}
{{- /* Rule: no field the chart sets itself. */}}
{{- if has $field $owned }}
{{- fail (printf "workers.componentFields.%s is set by the chart for nvidia.com/v1beta1 components; use the chart's own values instead"
  $field) }}
{{- else if not (has $field $allowed) }}
{{- /* Rule: only the component fields this chart passes through. */}}
{{- fail (printf "workers.componentFields.%s is not a nvidia.com/v1beta1 component field this chart passes through; allowed: %s"
  $field (join ", " $allowed)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
