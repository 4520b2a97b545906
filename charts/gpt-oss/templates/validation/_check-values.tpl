{{/*
Every cross-field rule of the values, one define per concern, each failure naming the keys, the values and
what is allowed. The schema has already checked types, enums and minimums. templates/validation/check-values.yaml
calls this, and Helm renders that file before any other template (the deepest folder first, then names in
reverse order; tests/chart/validation/test_check_values.py checks it), so a refusal names check-values.yaml and no template
computes anything from values that break a rule. The concerns live beside this file, one `_check-<concern>.tpl`
each, every rule under a one-line comment; a concern's helpers that decide nothing sit in `_value-helpers.tpl`.
A new concern: a new define `gpt-oss.checkValues.<concern>` in its `_check-<concern>.tpl`, and one include line
at the end of the list below. The order is the order of the checks: the first broken rule is reported. The URL rules
come first: no rule or helper reads a URL before they refused its credentials, masked.
Usage: {{ include "gpt-oss.checkValues" . }}
*/}}
{{- define "gpt-oss.checkValues" -}}
{{- include "gpt-oss.checkValues.urls" . }}
{{- include "gpt-oss.checkValues.gpu" . }}
{{- include "gpt-oss.checkValues.autoscaling" . }}
{{- include "gpt-oss.checkValues.trtllmServe" . }}
{{- include "gpt-oss.checkValues.topology" . }}
{{- include "gpt-oss.checkValues.quantization" . }}
{{- include "gpt-oss.checkValues.parallelism" . }}
{{- include "gpt-oss.checkValues.engine" . }}
{{- include "gpt-oss.checkValues.hardware" . }}
{{- include "gpt-oss.checkValues.benchmark" . }}
{{- include "gpt-oss.checkValues.componentFields" . }}
{{- include "gpt-oss.checkValues.dynamoAdmission" . }}
{{- include "gpt-oss.checkValues.liveState" . }}
{{- include "gpt-oss.checkValues.exposure" . }}
{{- include "gpt-oss.checkValues.disruption" . }}
{{- include "gpt-oss.checkValues.routing" . }}
{{- include "gpt-oss.checkValues.modelSource" . }}
{{- include "gpt-oss.checkValues.monitoring" . }}
{{- include "gpt-oss.checkValues.gracefulShutdown" . }}
{{- include "gpt-oss.checkValues.sizes" . }}
{{- include "gpt-oss.checkValues.dynamoRelease" . }}
{{- include "gpt-oss.checkValues.paths" . }}
{{- include "gpt-oss.checkValues.security" . }}
{{- include "gpt-oss.checkValues.placement" . }}
{{- include "gpt-oss.checkValues.names" . }}
{{- include "gpt-oss.checkValues.passthroughs" . }}
{{- end }}
