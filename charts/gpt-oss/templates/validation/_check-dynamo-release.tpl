{{- /* Dynamo release checks: the DGD API the chart writes, the release line, its runtimes, the live operator and DGD. */}}

{{/*
Refuses values outside the Dynamo releases the chart renders for (runtime dynamo only). Long messages are
written as a list of pieces joined with "", so no template line is over 160 characters.
Usage: {{ include "gpt-oss.checkValues.dynamoRelease" . }}
*/}}
{{- define "gpt-oss.checkValues.dynamoRelease" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $release := index . (include "gpt-oss.object" (list "gpt-oss.dynamoRelease" .)) }}
{{- $version := (index . (include "gpt-oss.object" (list "gpt-oss.dynamoRuntimeVersion" .))).version }}
{{- $range := $release.runtime }}

{{- /* Rule: the chart writes nvidia.com/v1beta1 only; v1alpha1 was retired (every release line serves v1beta1). */}}
{{- if eq .Values.dynamo.apiVersion "nvidia.com/v1alpha1" }}
{{- $msg := list "dynamo.apiVersion=nvidia.com/v1alpha1 was retired: every Dynamo release this chart renders for"
  " serves nvidia.com/v1beta1 (from 1.2.0), and from 1.5.0 the operator validates DGDs at v1beta1 only and stores"
  " them as v1beta1; set dynamo.apiVersion=nvidia.com/v1beta1 (the default), or remove the key" }}
{{- fail (join "" $msg) }}
{{- end }}

{{- /* Rule: the runtime is one the line's shape runs (no version at all is refused by dynamoAdmission). */}}
{{- if and $version (not (semverCompare (printf ">=%s-0, <%s-0" $range.from $range.below) $version)) }}
{{- $lines := list }}
{{- range $line, $record := include "gpt-oss.dynamoReleases" . | fromYaml }}
{{- $lines = append $lines (printf "%s (runtimes %s up to %s)" $line $record.runtime.from $record.runtime.below) }}
{{- end }}
{{- $msg := list "dynamo.releaseLine=%s renders for Dynamo %s up to (not including) %s, but the runtime is %s"
  " (dynamo.runtimeVersionOverride, else dynamo.image.tag); allowed: dynamo.releaseLine=%s, and dynamo.image.tag"
  " empty for the line's own %s" }}
{{- fail (printf (join "" $msg) $release.line $range.from $range.below $version (join ", " $lines) $range.tag) }}
{{- end }}

{{- /* Rule: workers env leaves the operator's injected variables alone (its probes use the system port). */}}
{{- $defaults := $release.operatorDefaults }}
{{- range $key := list "worker" "prefill" "decode" "" }}
{{- $env := ternary $.Values.workers.env (get (get $.Values.workers $key | default dict) "env" | default dict) (eq $key "") }}
{{- range $name := $defaults.reservedEnv }}
{{- if hasKey (default dict $env) $name }}
{{- $msg := list "%s.%s is set, but the Dynamo operator sets %s on every worker (%d) and points the probes it adds"
  " at it, so the pods would never be ready; remove it (the operator's variables: %s)" }}
{{- $where := ternary "workers.env" (printf "workers.%s.env" $key) (eq $key "") }}
{{- fail (printf (join "" $msg) $where $name $name (int $defaults.systemPort) (join ", " $defaults.reservedEnv)) }}
{{- end }}
{{- end }}
{{- end }}

{{- $gate := .Values.dynamo.admissionGate }}
{{- $gatePrefix := $release.worker.admissionGate }}
{{- $gateSet := list }}
{{- range $key := list "engineRequestLimit" "engineRequestWaitingLimit" }}
{{- with index $gate $key }}{{ $gateSet = append $gateSet (printf "dynamo.admissionGate.%s=%d" $key (int .)) }}{{ end }}
{{- end }}
{{- with int $gate.requestQueueLimit }}{{ $gateSet = append $gateSet (printf "dynamo.admissionGate.requestQueueLimit=%d" .) }}{{ end }}

{{- /* Rule: the admission gate's values need a line whose workers have the gate (it arrived with Dynamo 1.7.0). */}}
{{- if and $gateSet (not $gatePrefix) }}
{{- $lines := list }}
{{- range $line, $record := include "gpt-oss.dynamoReleases" . | fromYaml }}
{{- if $record.worker.admissionGate }}{{ $lines = append $lines (printf "dynamo.releaseLine=%s" $line) }}{{ end }}
{{- end }}
{{- $msg := list "%s is set, but the workers of the Dynamo %s line have no DYN_BACKEND_ADMISSION_* gate (it came with"
  " Dynamo 1.7.0), so nothing would limit them; allowed: %s, or dynamo.admissionGate left at its defaults" }}
{{- fail (printf (join "" $msg) (join ", " $gateSet) $release.line (join " or " $lines)) }}
{{- end }}

{{- /* Rule: a positive gate queue needs an engine limit (without one the worker fails at start). */}}
{{- if and (gt (int $gate.requestQueueLimit) 0) (kindIs "invalid" $gate.engineRequestLimit) (kindIs "invalid" $gate.engineRequestWaitingLimit) }}
{{- $msg := list "dynamo.admissionGate.requestQueueLimit=%d queues requests while an engine limit is reached, but no"
  " engine limit is set, and a Dynamo 1.7 worker with a positive queue limit and no engine limit fails at start;"
  " allowed: dynamo.admissionGate.engineRequestLimit or engineRequestWaitingLimit set, or requestQueueLimit=0" }}
{{- fail (printf (join "" $msg) (int $gate.requestQueueLimit)) }}
{{- end }}

{{- /* Rule: the gate's variables and flag are the chart's (dynamo.admissionGate), not workers env's or extraArgs'. */}}
{{- if $gatePrefix }}
{{- $owned := list (printf "%s_ENGINE_REQUEST_LIMIT" $gatePrefix) (printf "%s_ENGINE_REQUEST_WAITING_LIMIT" $gatePrefix)
  (printf "%s_REQUEST_QUEUE_LIMIT" $gatePrefix) "DYN_ENGINE_REQUEST_LIMIT" "DYN_DYNAMO_REQUEST_QUEUE_LIMIT" }}
{{- $found := list }}
{{- range $key := list "" "worker" "prefill" "decode" }}
{{- $where := ternary "workers" (printf "workers.%s" $key) (eq $key "") }}
{{- $env := ternary $.Values.workers.env (get (get $.Values.workers $key | default dict) "env") (eq $key "") | default dict }}
{{- range $name := $owned }}{{ if hasKey $env $name }}{{ $found = append $found (printf "%s.env.%s" $where $name) }}{{ end }}{{ end }}
{{- end }}
{{- range .Values.workers.extraArgs }}
{{- if eq (regexReplaceAll "=.*$" (toString .) "") "--engine-request-limit" }}{{ $found = append $found "workers.extraArgs --engine-request-limit" }}{{ end }}
{{- end }}
{{- with $found }}
{{- $msg := list "%s is set, but the chart sets the Dynamo %s workers' admission gate (%s_*, per attention-DP rank)"
  " from dynamo.admissionGate, and counts it in the plan; remove it and set dynamo.admissionGate.engineRequestLimit,"
  " engineRequestWaitingLimit or requestQueueLimit instead" }}
{{- fail (printf (join "" $msg) (first $found) $release.line $gatePrefix) }}
{{- end }}
{{- end }}

{{- /* Rule: workers.extraArgs adds flags; it does not repeat one the chart writes (gpt-oss.workerFlags). */}}
{{- $ownedFlags := include "gpt-oss.workerFlags" . | fromYaml }}
{{- range .Values.workers.extraArgs }}
{{- $flag := regexReplaceAll "=.*$" (toString .) "" }}
{{- if hasKey $ownedFlags $flag }}
{{- fail (printf (print "workers.extraArgs has %s, a flag the chart already writes on every worker from %s, so the worker "
  "would run with another value than the plan, the smoke test and the benchmark use; remove it and set that instead")
  $flag (get $ownedFlags $flag)) }}
{{- end }}
{{- end }}

{{- /* Rule: the operator the cluster runs supports the runtime: its own minor, two before it, one after (N-2). */}}
{{- $operator := include "gpt-oss.liveDynamoOperator" . | fromYaml }}
{{- if and $operator $version }}
{{- $o := semver $operator.version }}
{{- $r := semver $version }}
{{- $lowest := sub (int $o.Minor) 2 }}
{{- $highest := add (int $o.Minor) 1 }}
{{- if or (ne (int $o.Major) (int $r.Major)) (lt (int $r.Minor) $lowest) (gt (int $r.Minor) $highest) }}
{{- $fit := list }}
{{- range $line, $record := include "gpt-oss.dynamoReleases" . | fromYaml }}
{{- $m := (semver $record.runtime.tag).Minor | int }}
{{- if and (ge $m $lowest) (le $m $highest) }}{{ $fit = append $fit (printf "dynamo.releaseLine=%s" $line) }}{{ end }}
{{- end }}
{{- $allowed := ternary (join " or " $fit) "no release line of this chart" (gt (len $fit) 0) }}
{{- $msg := list "the Dynamo operator in the cluster is %s (Deployment %s), and an operator supports runtimes from"
  " two minors before its own to one after it (%d.%d to %d.%d here), but this release renders the runtime %s"
  " (dynamo.releaseLine=%s); allowed: %s, or upgrade the Dynamo platform one minor at a time first"
  " (docs/operations.md, \"Dynamo upgrades\"); dynamo.operator.check=false skips this check" }}
{{- $major := int $o.Major }}
{{- fail (printf (join "" $msg) $operator.version $operator.where $major $lowest $major $highest $version $release.line $allowed) }}
{{- end }}
{{- end }}

{{- /* Rule: an upgrade moves the runtime by one minor at most (upstream applies every intermediate minor in order). */}}
{{- $installed := include "gpt-oss.liveDynamoVersion" . | fromYaml }}
{{- if and $installed $version }}
{{- $i := semver $installed.version }}
{{- $n := semver $version }}
{{- $from := int $i.Minor }}
{{- $to := int $n.Minor }}
{{- if or (ne (int $i.Major) (int $n.Major)) (gt $to (add $from 1)) (lt $to (sub $from 1)) }}
{{- $path := list (printf "%d.%d" (int $i.Major) $from) }}
{{- $steps := list }}
{{- $minors := include "gpt-oss.dynamoMinors" . | fromYamlArray }}
{{- if lt $to $from }}{{ $minors = reverse $minors }}{{ end }}
{{- range $minors }}
{{- $m := (semver .tag).Minor | int }}
{{- if or (and (gt $m $from) (le $m $to)) (and (lt $m $from) (ge $m $to)) }}
{{- $path = append $path .minor }}
{{- $steps = append $steps (printf "dynamo.releaseLine=%s dynamo.image.tag=%s" .line .tag) }}
{{- end }}
{{- end }}
{{- $msg := list "the live DynamoGraphDeployment %s runs Dynamo %s (%s), and this upgrade renders %s: Dynamo"
  " upgrades to the adjacent minor only, applying every intermediate minor in order; go %s, one helm upgrade per"
  " step with %s, after upgrading the Dynamo platform (operator, CRDs, Grove, KAI scheduler) to that minor"
  " (docs/operations.md, \"Dynamo upgrades\")" }}
{{- $dgd := printf "%s/%s" .Release.Namespace (include "gpt-oss.fullname" .) }}
{{- fail (printf (join "" $msg) $dgd $installed.version $installed.source $version (join " -> " $path) (join ", then " $steps)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
