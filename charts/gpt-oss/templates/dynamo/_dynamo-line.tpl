{{/*
The Dynamo release line the chart renders for: "1.2" or "1.6". Stand-in of branch issue-33c, which has no
dynamo.releaseLine yet: the line of dynamo.image.tag (runtimeVersionOverride first), 1.6 from 1.6.0 on, else 1.2;
"1.6" when the tag names no version. Branch issue-33a's define of the same name replaces it.
Usage: {{ include "gpt-oss.dynamoLine" . }}
*/}}
{{- define "gpt-oss.dynamoLine" -}}
{{- $version := (include "gpt-oss.dynamoRuntimeVersion" . | fromYaml).version }}
{{- if and $version (semverCompare "<1.6.0-0" $version) }}1.2{{ else }}1.6{{ end }}
{{- end }}
