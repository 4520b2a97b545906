{{- /* Autoscaling and planner rules (issue 16): who scales which role, and planner settings the planner starts with. */}}

{{/*
Autoscaling and planner (issue 16): scalers only on deployed roles, never below 1 replica, never
together with the planner on a worker role; the planner only with Dynamo, and only with settings the
1.2.1 planner starts with (PlannerConfig._validate_config).
Usage: {{ include "gpt-oss.checkValues.autoscaling" . }}
*/}}
{{- define "gpt-oss.checkValues.autoscaling" -}}
{{- $w := .Values.workers }}
{{- $dynamo := eq .Values.runtime "dynamo" }}
{{- $scalable := list (dict "key" "frontend" "autoscaling" .Values.frontend.autoscaling "deployed" $dynamo
  "why" (printf "runtime=%s" .Values.runtime)) }}
{{- range $roleKey := list "worker" "prefill" "decode" }}
{{- $role := get $w $roleKey }}
{{- $why := ternary (printf "workers.%s.enabled=false" $roleKey) (printf "runtime=%s" $.Values.runtime) $dynamo }}
{{- $scalable = append $scalable (dict "key" (printf "workers.%s" $roleKey) "autoscaling" $role.autoscaling
  "deployed" (and $dynamo $role.enabled) "why" $why) }}
{{- end }}
{{- $scalable = append $scalable (dict "key" "trtllmServe" "autoscaling" .Values.trtllmServe.autoscaling
  "deployed" (not $dynamo) "why" (printf "runtime=%s" .Values.runtime)) }}
{{- range $s := $scalable }}
{{- $a := $s.autoscaling }}
{{- if $a.enabled }}
{{- /* Rule: a scaler only on a deployed role. */}}
{{- if not $s.deployed }}
{{- fail (printf "%s.autoscaling.enabled=true, but %s is not deployed (%s); turn %s.autoscaling.enabled off or deploy the role"
  $s.key $s.key $s.why $s.key) }}
{{- end }}
{{- /* Rule: a scaler never goes below 1 replica (nothing would scale it up again). */}}
{{- if lt (int $a.minReplicas) 1 }}
{{- fail (printf "%s.autoscaling.minReplicas=%d is below 1: %s; allowed: minReplicas 1 or more" $s.key (int $a.minReplicas)
  (ternary
    "a Dynamo frontend with no workers drops the model from /v1/models, and then nothing scales it up again"
    "trtllm-serve has no activator, so nothing would scale a Deployment at zero up again"
    $dynamo)) }}
{{- end }}
{{- /* Rule: maxReplicas is at least minReplicas. */}}
{{- if lt (int $a.maxReplicas) (int $a.minReplicas) }}
{{- fail (printf "%s.autoscaling.maxReplicas=%d is below %s.autoscaling.minReplicas=%d; allowed: maxReplicas >= minReplicas"
  $s.key (int $a.maxReplicas) $s.key (int $a.minReplicas)) }}
{{- end }}
{{- /* Rule: one autoscaler per worker role: the planner or a scaler, never both. */}}
{{- if and $.Values.planner.enabled (hasPrefix "workers." $s.key) }}
{{- fail (printf (print "planner.enabled=true and %s.autoscaling.enabled=true: the planner scales the worker roles, and a %s "
  "on the same role would fight it (one autoscaler per service); turn %s.autoscaling.enabled off (frontend.autoscaling may stay)")
  $s.key (ternary "KEDA ScaledObject" "HPA" (eq $a.scaler "keda")) $s.key) }}
{{- end }}
{{- end }}
{{- end }}
{{- $pl := .Values.planner }}
{{- if $pl.enabled }}
{{- /* Rule: the planner scales DynamoGraphDeployment components only. */}}
{{- if not $dynamo }}
{{- fail (printf (print "planner.enabled=true needs runtime=dynamo (the SLA planner scales DynamoGraphDeployment components), "
  "but runtime=%s; use trtllmServe.autoscaling instead") .Values.runtime) }}
{{- end }}
{{- /* Rule: the planner's GPU floor is at most its ceiling. */}}
{{- if and (ge (int $pl.minGpuBudget) 0) (gt (int $pl.minGpuBudget) (int $pl.maxGpuBudget)) }}
{{- fail (printf (print "planner.minGpuBudget=%d is above planner.maxGpuBudget=%d: the planner cannot keep both; allowed: "
  "planner.minGpuBudget at most %d, or -1 (no floor)") (int $pl.minGpuBudget) (int $pl.maxGpuBudget) (int $pl.maxGpuBudget)) }}
{{- end }}
{{- $floor := 0 }}
{{- $floorParts := list }}
{{- range $roleKey := list "worker" "prefill" "decode" }}
{{- $role := get $w $roleKey }}
{{- if $role.enabled }}
{{- $gpus := mul (int $pl.minEndpoint) (int $role.tensorParallelSize) (int $role.pipelineParallelSize) }}
{{- $floor = add $floor $gpus }}
{{- $floorParts = append $floorParts (printf "workers.%s: %d x %d" $roleKey (int $pl.minEndpoint)
  (mul (int $role.tensorParallelSize) (int $role.pipelineParallelSize))) }}
{{- end }}
{{- end }}
{{- /* Rule: the planner's fewest replicas (minEndpoint of each worker role) fit its GPU budget. */}}
{{- if gt $floor (int $pl.maxGpuBudget) }}
{{- fail (printf (print "planner.minEndpoint=%d keeps at least %d replicas of each worker role, %d GPUs (%s), above "
  "planner.maxGpuBudget=%d: the planner's floor is above its ceiling; allowed: planner.maxGpuBudget %d or more, or a lower "
  "planner.minEndpoint") (int $pl.minEndpoint) (int $pl.minEndpoint) $floor (join "; " $floorParts) (int $pl.maxGpuBudget) $floor) }}
{{- end }}
{{- /* With another optimizationTarget the planner forces load scaling on and throughput scaling off. */}}
{{- if eq $pl.optimizationTarget "sla" }}
{{- /* Rule: the planner needs a scaling mode. */}}
{{- if not (or $pl.throughputScaling $pl.loadScaling) }}
{{- fail (print "planner.throughputScaling=false and planner.loadScaling=false: the planner refuses to start without a scaling mode; "
  "turn one on") }}
{{- end }}
{{- /* Rule: throughput scaling needs a pre-deployment sweep. */}}
{{- if and $pl.throughputScaling (eq $pl.preDeploymentSweepingMode "none") }}
{{- fail (print "planner.throughputScaling=true with planner.preDeploymentSweepingMode=none: the 1.2.1 planner refuses to start "
  "(throughput scaling needs a pre-deployment sweep to model the engines); allowed: preDeploymentSweepingMode rapid or thorough, "
  "or throughputScaling=false") }}
{{- end }}
{{- /* Rule: load scaling (the fast loop) adjusts more often than throughput scaling (the slow one). */}}
{{- $load := int $pl.loadAdjustmentIntervalSeconds }}
{{- $throughput := int $pl.throughputAdjustmentIntervalSeconds }}
{{- if and $pl.throughputScaling $pl.loadScaling (ge $load $throughput) }}
{{- fail (printf (print "planner.loadAdjustmentIntervalSeconds=%d is not below planner.throughputAdjustmentIntervalSeconds=%d: "
  "the 1.2.1 planner refuses to start (load scaling is the fast loop, throughput scaling the slow one); "
  "allowed: loadAdjustmentIntervalSeconds < %d") $load $throughput $throughput) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
