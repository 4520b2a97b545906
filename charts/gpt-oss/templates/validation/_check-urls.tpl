{{- /* URL rules: each URL value of the form its key takes, and none with credentials; every message masks them. */}}

{{/*
URLs (docs/security.md): the values that carry a URL (ci/generate/schema.py's URL_KEYS) are checked here, not
by schema patterns: Helm's schema error quotes the whole value, password included. First of the concerns, so no
other rule or helper reads a URL before these ran (urlParse's error quotes it too); messages show each URL through
gpt-oss.maskedUrl.
Usage: {{ include "gpt-oss.checkValues.urls" . }}
*/}}
{{- define "gpt-oss.checkValues.urls" -}}
{{- $mc := .Values.modelCache }}
{{- $w := .Values.workers }}
{{- /* [user:password@]host[:port]: a name or an IPv6 address in brackets, so urlParse reads every URL that passes. */}}
{{- $authority := `([^\s/?#]*@)?([^\s/?#@\[\]:]+|\[[0-9A-Fa-f:.]+\])(:[0-9]+)?` }}
{{- $base := print `^(https?://` $authority `/?)?$` }}
{{- $withPath := print `^https?://` $authority `(/\S*)?$` }}
{{- $optionalWithPath := print `^(https?://` $authority `(/\S*)?)?$` }}
{{- $forms := list
  (list "model.tiktoken.url" .Values.model.tiktoken.url (print `^https?://` $authority `/(\S*/)?o200k_base\.tiktoken$`)
    "http(s)://host[:port]/<path>/o200k_base.tiktoken")
  (list "modelCache.huggingface.endpoint" $mc.huggingface.endpoint $optionalWithPath "empty, or http(s)://host[:port][/path]")
  (list "modelCache.s3.endpoint" $mc.s3.endpoint $base "empty, or http(s)://host[:port] without a path")
  (list "modelCache.oci.tokenService" $mc.oci.tokenService (print `^(https://` $authority `(/\S*)?)?$`)
    "empty, or https://host[:port][/path]")
  (list "modelCache.proxy.httpsProxy" $mc.proxy.httpsProxy $base "empty, or http(s)://host[:port] without a path")
  (list "modelCache.proxy.httpProxy" $mc.proxy.httpProxy $base "empty, or http(s)://host[:port] without a path")
  (list "frontend.urlOverride" .Values.frontend.urlOverride $optionalWithPath "empty, or http(s)://host[:port][/path]")
  (list "frontend.autoscaling.prometheusAddress" .Values.frontend.autoscaling.prometheusAddress $withPath
    "http(s)://host[:port][/path]")
  (list "workers.worker.autoscaling.prometheusAddress" $w.worker.autoscaling.prometheusAddress $withPath
    "http(s)://host[:port][/path]")
  (list "workers.prefill.autoscaling.prometheusAddress" $w.prefill.autoscaling.prometheusAddress $withPath
    "http(s)://host[:port][/path]")
  (list "workers.decode.autoscaling.prometheusAddress" $w.decode.autoscaling.prometheusAddress $withPath
    "http(s)://host[:port][/path]")
  (list "trtllmServe.autoscaling.prometheusAddress" .Values.trtllmServe.autoscaling.prometheusAddress $withPath
    "http(s)://host[:port][/path]")
  (list "planner.prometheusEndpoint" .Values.planner.prometheusEndpoint $withPath "http(s)://host[:port][/path]") }}
{{- $misshapen := list }}
{{- $withCredentials := list }}
{{- /* Each (form, URL) matched once: most keys share a form and a default (Helm compiles a pattern per match). */}}
{{- $matched := dict }}
{{- range $forms }}
{{- $url := index . 1 }}
{{- $key := printf "%s %s" (index . 2) $url }}
{{- if not (hasKey $matched $key) }}{{ $_ := set $matched $key (regexMatch (index . 2) $url) }}{{ end }}
{{- if not (get $matched $key) }}
{{- $misshapen = append $misshapen (printf "%s=%q (allowed: %s)" (index . 0) (include "gpt-oss.maskedUrl" $url) (index . 3)) }}
{{- else if and (contains "@" $url) (regexMatch `^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*@` $url) }}
{{- $withCredentials = append $withCredentials (printf "%s=%s" (index . 0) (include "gpt-oss.maskedUrl" $url)) }}
{{- end }}
{{- end }}
{{- /* Rule: every URL value has the form its key takes (the schema leaves it to this rule: its error would quote the value). */}}
{{- if $misshapen }}
{{- fail (printf (print "not a URL of the form its key takes: %s; shown with credentials, query and fragment masked (***): no "
  "error quotes a password") (join "; " $misshapen)) }}
{{- end }}
{{- /* Rule: no URL carries credentials (user:password@): values and rendered objects are not secret. */}}
{{- if $withCredentials }}
{{- fail (printf (print "%s %s (user:password@): they would be stored in plain text in the release and in every object that "
  "carries the URL; allowed: the URL without them (a proxy that needs them: modelCache.proxy.existingSecret, a Secret "
  "holding the whole URL)") (join ", " $withCredentials)
  (ternary "has credentials in it" "have credentials in them" (eq (len $withCredentials) 1))) }}
{{- end }}
{{- end }}
