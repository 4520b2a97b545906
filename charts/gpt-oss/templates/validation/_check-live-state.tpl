{{- /* Upgrade rules: what the Dynamo operator refuses against the live DynamoGraphDeployment (gpt-oss.liveDGD). */}}

{{/*
Upgrades the Dynamo operator would refuse against the live DGD: renamed components, changed topology constraints.
Usage: {{ include "gpt-oss.checkValues.liveState" . }}
*/}}
{{- define "gpt-oss.checkValues.liveState" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $fields := .Values.workers.componentFields }}
{{- $name := include "gpt-oss.fullname" . }}
{{- $live := include "gpt-oss.liveDGD" . | fromJson }}
{{- if $live }}
{{- $liveNames := list }}
{{- range (dig "spec" "components" list $live) }}{{ $liveNames = append $liveNames .name }}{{ end }}
{{- $names := list "Frontend" }}
{{- range $row := include "gpt-oss.roleTable" . | fromJsonArray }}
{{- if (get $.Values.workers $row.key).enabled }}{{ $names = append $names $row.component }}{{ end }}
{{- end }}
{{- $liveList := sortAlpha $liveNames | join ", " }}
{{- $list := sortAlpha $names | join ", " }}
{{- /* Rule: the components keep their names after creation (no switch between aggregated and disaggregated). */}}
{{- if ne $liveList $list }}
{{- fail (printf (print "the live DynamoGraphDeployment %s/%s has the components %s, but this release renders %s: the Dynamo "
  "operator refuses renaming components after creation (\"component topology is immutable and cannot be modified after "
  "creation\"), so a release cannot switch between the aggregated (workers.worker) and disaggregated (workers.prefill + "
  "workers.decode) topologies; install the new topology as a new release, or helm uninstall %s first (the model cache PVC is kept)")
  .Release.Namespace $name $liveList $list .Release.Name) }}
{{- end }}
{{- $liveConstraints := dict "spec" (dig "spec" "topologyConstraint" dict $live) }}
{{- range (dig "spec" "components" list $live) }}{{ $_ := set $liveConstraints .name (default dict .topologyConstraint) }}{{ end }}
{{- $constraints := dict "spec" (include "gpt-oss.dgdTopologyConstraint" . | fromYaml) "Frontend" dict }}
{{- range $component := without $names "Frontend" }}{{ $_ := set $constraints $component (default dict $fields.topologyConstraint) }}{{ end }}
{{- /* Rule: the topology constraints stay as created. */}}
{{- if ne (toJson $liveConstraints) (toJson $constraints) }}
{{- fail (printf (print "the topology constraints render %s, but the live DynamoGraphDeployment %s/%s has %s (spec: "
  "dynamo.topologyConstraint, workers: workers.componentFields.topologyConstraint): the Dynamo operator refuses adding, removing "
  "or changing topology constraints after creation (\"delete and recreate the DynamoGraphDeployment to change topology "
  "constraints\"); keep the live values, or helm uninstall %s and install again")
  (toJson $constraints) .Release.Namespace $name (toJson $liveConstraints) .Release.Name) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
