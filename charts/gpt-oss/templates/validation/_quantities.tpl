{{- /* Kubernetes quantities as numbers, for rules that compare them (requests at most limits). */}}

{{/*
Milli-units of a Kubernetes quantity (500m, 2, 1.5, 16Gi, 100M, 1e3, 2E-3) as a float (printed with %v), the way
resource.ParseQuantity reads it: binary suffixes Ki Mi Gi Ti Pi Ei, decimal m k M G T P E, or an integer exponent
e/E; empty for a string it does not read (sixteen, 1e1.5, 1KB). Floats compare exactly up to 2^53 millis (8 PiB),
beyond what a pod asks for. tests/chart/validation/test_passthroughs.py checks it against Kubernetes' values.
Usage: {{ $millis := include "gpt-oss.quantityMillis" "16Gi" }}
*/}}
{{- define "gpt-oss.quantityMillis" -}}
{{- /* The number, then the rest a suffix of the table: one pattern to compile, a second for an exponent (Helm compiles each anew). */}}
{{- $quantity := toString . }}
{{- $number := regexFind "^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)" $quantity }}
{{- $suffix := trimPrefix $number $quantity }}
{{- $factor := get (dict "" "1000" "m" "1" "k" "1e6" "M" "1e9" "G" "1e12" "T" "1e15" "P" "1e18" "E" "1e21"
  "Ki" "1024000" "Mi" "1048576000" "Gi" "1073741824000" "Ti" "1099511627776000" "Pi" "1125899906842624000"
  "Ei" "1152921504606846976000") $suffix }}
{{- if and $number $factor }}
{{- printf "%v" (mulf (float64 $number) (float64 $factor)) }}
{{- else if and $number (regexMatch "^[eE][+-]?[0-9]+$" $suffix) }}
{{- /* an exponent: e3 is 10^3 */}}
{{- $exponent := int (trimPrefix "+" (substr 1 (len $suffix) $suffix)) }}
{{- $millis := 1000.0 }}
{{- range until (int (max $exponent (sub 0 $exponent))) }}
{{- $millis = ternary (mulf $millis 10.0) (divf $millis 10.0) (gt $exponent 0) }}
{{- end }}
{{- printf "%v" (mulf (float64 $number) $millis) }}
{{- end }}
{{- end }}
