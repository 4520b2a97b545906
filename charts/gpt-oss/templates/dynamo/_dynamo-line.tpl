{{- /* The Dynamo release line this release renders for. */}}

{{/*
STAND-IN (issue-33b): the release line, "1.2" or "1.6", derived from the Dynamo runtime version (dynamo.image.tag, or
dynamo.runtimeVersionOverride) until issue-33a's dynamo.releaseLine exists; 33a's define of the same name replaces
this one at merge. 1.6.0 and later are the 1.6 line, anything older the 1.2 line.
Usage: {{ $line := include "gpt-oss.dynamoLine" . }}
*/}}
{{- define "gpt-oss.dynamoLine" -}}
{{- $version := (include "gpt-oss.dynamoRuntimeVersion" . | fromYaml).version }}
{{- ternary "1.6" "1.2" (and (ne $version "") (semverCompare ">=1.6.0-0" $version)) }}
{{- end }}
