{{- /* Helpers of the checks that decide nothing themselves: they compute what a rule compares. */}}

{{/*
Paths (a.b.c) where a values map differs from its defaults, leaves compared as JSON (absent = null).
Usage: {{ include "gpt-oss.changedValues" (dict "path" "" "value" $values "default" $defaults) | fromYamlArray }}
*/}}
{{- define "gpt-oss.changedValues" -}}
{{- $changed := list }}
{{- if and (kindIs "map" .value) (kindIs "map" .default) }}
{{- range $key := concat (keys .value) (keys .default) | uniq | sortAlpha }}
{{- $path := ternary $key (printf "%s.%s" $.path $key) (eq $.path "") }}
{{- $next := dict "path" $path "value" (index $.value $key) "default" (index $.default $key) }}
{{- $changed = concat $changed (include "gpt-oss.changedValues" $next | fromYamlArray) }}
{{- end }}
{{- else if ne (toJson .value) (toJson .default) }}
{{- $changed = append $changed .path }}
{{- end }}
{{- toYaml $changed }}
{{- end }}

{{/*
Bytes of a Kubernetes quantity (200Gi, 64G, 1.5Ti, 512Mi, 1000000), as a decimal string; empty for a form it
does not read (an exponent, milli-units), so a rule comparing sizes skips what it cannot read.
Usage: {{ $bytes := include "gpt-oss.quantityBytes" "200Gi" }}
*/}}
{{- define "gpt-oss.quantityBytes" -}}
{{- $quantity := toString . }}
{{- $number := regexFind "^[0-9]+(\\.[0-9]+)?" $quantity }}
{{- $factors := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "P" 1000000000000000
  "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "Pi" 1125899906842624 }}
{{- $suffix := trimPrefix $number $quantity }}
{{- if and $number (hasKey $factors $suffix) }}
{{- printf "%.0f" (mulf (float64 $number) (float64 (get $factors $suffix))) }}
{{- end }}
{{- end }}

{{/*
A URL value as a message may show it: what comes before its last "@" after the scheme (user:password) and after a "?"
or "#" (a query's tokens) replaced by ***, so no error quotes a credential.
Usage: {{ include "gpt-oss.maskedUrl" "http://user:secret@proxy:3128" }} (http://***@proxy:3128)
*/}}
{{- define "gpt-oss.maskedUrl" -}}
{{- $userinfoMasked := regexReplaceAll `(?s)^([A-Za-z][A-Za-z0-9+.-]*://)?.*@` (toString .) "${1}***@" }}
{{- regexReplaceAll `(?s)([?#]).*$` $userinfoMasked "${1}***" }}
{{- end }}

{{/*
An engine YAML's moe_config.backend as text, "" when the engine, its moe_config or the backend is unset (null included).
Usage: {{ include "gpt-oss.engineMoeBackend" .Values.workers.worker.engine }}
*/}}
{{- define "gpt-oss.engineMoeBackend" -}}
{{- $moe := get (ternary . dict (kindIs "map" .)) "moe_config" }}
{{- if kindIs "map" $moe }}{{ toString (get $moe "backend" | default "") }}{{ end }}
{{- end }}

{{/*
An IPv4 CIDR as numbers, JSON {address, network, size, prefix, networkText} (address and network as 32-bit integers,
size 2^(32-prefix)); {} for anything else (IPv6, not a CIDR), so a rule comparing IPv4 ranges skips it.
Usage: {{ $range := include "gpt-oss.ipv4Range" "10.1.0.0/16" | fromJson }}
*/}}
{{- define "gpt-oss.ipv4Range" -}}
{{- if regexMatch "^[0-9]{1,3}(\\.[0-9]{1,3}){3}/[0-9]{1,2}$" . }}
{{- $parts := splitList "/" . }}
{{- $prefix := min 32 (atoi (last $parts)) }}
{{- $address := 0 }}
{{- range splitList "." (first $parts) }}{{ $address = add (mul $address 256) (atoi .) }}{{ end }}
{{- $size := 1 }}
{{- range until (int (sub 32 $prefix)) }}{{ $size = mul $size 2 }}{{ end }}
{{- $network := sub $address (mod $address $size) }}
{{- $text := printf "%d.%d.%d.%d" (div $network 16777216) (mod (div $network 65536) 256) (mod (div $network 256) 256)
  (mod $network 256) }}
{{- dict "address" $address "network" $network "size" $size "prefix" $prefix "networkText" $text | toJson }}
{{- else }}
{{- "{}" }}
{{- end }}
{{- end }}
