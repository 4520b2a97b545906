{{- /* Dynamo release checks: the DGD API the chart writes, the release line and its runtime versions. */}}

{{/*
Refuses values outside the Dynamo releases the chart renders for (runtime dynamo only).
Usage: {{ include "gpt-oss.checkDynamoRelease" . }}
*/}}
{{- define "gpt-oss.checkDynamoRelease" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- /* Rule: the chart writes nvidia.com/v1beta1 only; v1alpha1 was retired (every release line serves v1beta1). */}}
{{- if eq .Values.dynamo.apiVersion "nvidia.com/v1alpha1" }}
{{- fail "dynamo.apiVersion=nvidia.com/v1alpha1 was retired: every Dynamo release this chart renders for serves nvidia.com/v1beta1 (from 1.2.0), and from 1.5.0 the operator validates DGDs at v1beta1 only and stores them as v1beta1; an installed v1alpha1 DGD is the same object, so helm upgrade converts it in place; set dynamo.apiVersion=nvidia.com/v1beta1 (the default), or remove the key" }}
{{- end }}
{{- $version := (include "gpt-oss.dynamoRuntimeVersion" . | fromYaml).version }}
{{- /* Rule: the runtime serves nvidia.com/v1beta1 (Dynamo 1.2.0 or newer); no version is refused by dynamoAdmission. */}}
{{- if and $version (semverCompare "<1.2.0-0" $version) }}
{{- fail (printf "the Dynamo runtime is %s (dynamo.runtimeVersionOverride, else dynamo.image.tag), but nvidia.com/v1beta1, the only DGD API this chart writes, is served from Dynamo 1.2.0; allowed: a runtime of Dynamo 1.2.0 or newer" $version) }}
{{- end }}
{{- end }}
{{- end }}
