{{- /* Kubernetes quantities as numbers, for rules that compare them (requests at most limits). */}}

{{/*
Milli-units of a Kubernetes quantity (500m, 2, 1.5, 16Gi, 100M, 1e3, 2E-3) as a float (printed with %v), the way
resource.ParseQuantity reads it: binary suffixes Ki Mi Gi Ti Pi Ei, decimal m k M G T P E, or an integer exponent
e/E; empty for a string it does not read (sixteen, 1e1.5, 1KB). Floats compare exactly up to 2^53 millis (8 PiB),
beyond what a pod asks for. tests/chart/validation/test_passthroughs.py checks it against Kubernetes' values.
Usage: {{ $millis := include "gpt-oss.quantityMillis" "16Gi" }}
*/}}
{{- define "gpt-oss.quantityMillis" -}}
{{- $quantity := toString . }}
{{- if regexMatch "^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$" $quantity }}
{{- $number := regexFind "^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)" $quantity }}
{{- $suffix := trimPrefix $number $quantity }}
{{- $factors := dict "" "1000" "m" "1" "k" "1e6" "M" "1e9" "G" "1e12" "T" "1e15" "P" "1e18" "E" "1e21"
  "Ki" "1024000" "Mi" "1048576000" "Gi" "1073741824000" "Ti" "1099511627776000" "Pi" "1125899906842624000"
  "Ei" "1152921504606846976000" }}
{{- $factor := 1000.0 }}
{{- if hasKey $factors $suffix }}
{{- $factor = float64 (get $factors $suffix) }}
{{- else }}
{{- /* an exponent: e3 is 10^3 */}}
{{- $exponent := int (trimPrefix "+" (substr 1 (len $suffix) $suffix)) }}
{{- range until (int (max $exponent (sub 0 $exponent))) }}
{{- $factor = ternary (mulf $factor 10.0) (divf $factor 10.0) (gt $exponent 0) }}
{{- end }}
{{- end }}
{{- printf "%v" (mulf (float64 $number) $factor) }}
{{- end }}
{{- end }}
