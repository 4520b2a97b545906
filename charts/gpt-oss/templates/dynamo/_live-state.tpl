{{- /* Live objects of the release, read with lookup (empty under helm template and Argo CD). */}}

{{/*
The live DynamoGraphDeployment of this release: toJson of the object named as the chart names it, in the
release namespace, read in the chosen dynamo.apiVersion (the API server converts), or {} when absent.
Usage: {{ $live := include "gpt-oss.liveDGD" . | fromJson }}
*/}}
{{- define "gpt-oss.liveDGD" -}}
{{- $live := dict }}
{{- /* Only where the API serves the kind: lookup of an unknown kind fails instead of returning nothing. */}}
{{- if .Capabilities.APIVersions.Has (printf "%s/DynamoGraphDeployment" .Values.dynamo.apiVersion) }}
{{- $live = lookup .Values.dynamo.apiVersion "DynamoGraphDeployment" .Release.Namespace (include "gpt-oss.fullname" .) | default dict }}
{{- end }}
{{- toJson $live }}
{{- end }}

{{/*
The Dynamo runtime version the live DynamoGraphDeployment runs (gpt-oss.liveDGD), as MAJOR.MINOR.PATCH with
where it was read: the chart's gpt-oss/dynamo-runtime-version annotation, else a component's
runtimeVersionOverride, else the version in a component's main image tag; {} without a live DGD or a version.
Usage: {{ $installed := include "gpt-oss.liveDynamoVersion" . | fromYaml }}
*/}}
{{- define "gpt-oss.liveDynamoVersion" -}}
{{- $live := include "gpt-oss.liveDGD" . | fromJson }}
{{- $semver := `^[vV]?[0-9]+\.[0-9]+\.[0-9]+` }}
{{- $found := dict }}
{{- with (dig "metadata" "annotations" "gpt-oss/dynamo-runtime-version" "" $live) }}
{{- if regexMatch $semver . }}{{ $found = dict "version" . "source" "its gpt-oss/dynamo-runtime-version annotation" }}{{ end }}
{{- end }}
{{- range (dig "spec" "components" list $live) }}
{{- if and (not $found) .runtimeVersionOverride (regexMatch $semver (toString .runtimeVersionOverride)) }}
{{- $found = dict "version" (toString .runtimeVersionOverride) "source" (printf "the runtimeVersionOverride of component %s" .name) }}
{{- end }}
{{- $component := . }}
{{- range (dig "podTemplate" "spec" "containers" list .) }}
{{- $tag := regexFind "[^:/@]*$" (regexReplaceAll "@.*$" (toString .image) "") }}
{{- if and (not $found) (eq .name "main") (regexMatch ":" (toString .image)) (regexMatch $semver $tag) }}
{{- $found = dict "version" $tag "source" (printf "the image of component %s, %s" $component.name .image) }}
{{- end }}
{{- end }}
{{- end }}
{{- with $found }}
version: {{ regexFind $semver .version | trimPrefix "v" | trimPrefix "V" | quote }}
source: {{ .source | quote }}
{{- end }}
{{- end }}

{{/*
The Dynamo operator the cluster runs, read with lookup from its Deployment (in dynamo.operator.namespace, or every
namespace when empty): the --operator-version=X argument the platform chart writes, else the tag of a
kubernetes-operator image; {} when dynamo.operator.check=false, under helm template and Argo CD (no lookup), or
when no such Deployment is found.
  version: MAJOR.MINOR.PATCH; where: <namespace>/<Deployment name>
Usage: {{ $operator := include "gpt-oss.liveDynamoOperator" . | fromYaml }}
*/}}
{{- define "gpt-oss.liveDynamoOperator" -}}
{{- $found := dict }}
{{- if .Values.dynamo.operator.check }}
{{- $semver := `^[vV]?[0-9]+\.[0-9]+\.[0-9]+` }}
{{- $deployments := lookup "apps/v1" "Deployment" .Values.dynamo.operator.namespace "" | default dict }}
{{- range $deployment := (get $deployments "items" | default list) }}
{{- range (dig "spec" "template" "spec" "containers" list $deployment) }}
{{- $version := "" }}
{{- range (default list .args) }}
{{- if hasPrefix "--operator-version=" (toString .) }}{{ $version = trimPrefix "--operator-version=" (toString .) }}{{ end }}
{{- end }}
{{- if and (not $version) (regexMatch "/kubernetes-operator:" (toString .image)) }}
{{- $version = regexFind "[^:]*$" (regexReplaceAll "@.*$" (toString .image) "") }}
{{- end }}
{{- if and (not $found) (regexMatch $semver $version) }}
{{- $where := printf "%s/%s" $deployment.metadata.namespace $deployment.metadata.name }}
{{- $found = dict "version" (regexFind $semver $version | trimPrefix "v" | trimPrefix "V") "where" $where }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- with $found }}
version: {{ .version | quote }}
where: {{ .where | quote }}
{{- end }}
{{- end }}
