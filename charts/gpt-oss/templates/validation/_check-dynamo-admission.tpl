{{- /*
# Dynamo operator admission rules
What the Dynamo operator's admission webhooks (ai-dynamo/dynamo deploy/operator/internal/webhook) refuse,
refused here first; tests/chart/dynamo/test_operator_admission.py names the source file, commit and line of each.
Rules that differ between operator releases are decided from the runtime version
(gpt-oss.dynamoRuntimeVersion): the chart assumes the platform runs the release of its runtime image.
What the operator refuses against the live DGD on upgrade is in _check-live-state.tpl.
*/}}

{{/*
Values the Dynamo operator would refuse at admission.
Usage: {{ include "gpt-oss.checkValues.dynamoAdmission" . }}
*/}}
{{- define "gpt-oss.checkValues.dynamoAdmission" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $runtime := index . (include "gpt-oss.object" (list "gpt-oss.dynamoRuntimeVersion" .)) }}
{{- $fields := .Values.workers.componentFields }}
{{- $constraint := .Values.dynamo.topologyConstraint }}

{{- /* Rule: operators from 1.4.0 read the runtime version from the image tag, or from runtimeVersionOverride. */}}
{{- if not $runtime.version }}
{{- fail (printf (print "dynamo.image.tag=%s gives no version the Dynamo operator can parse (MAJOR.MINOR.PATCH, then only "
  "-prerelease or +build), and operators from 1.4.0 refuse the DGD: \"runtimeVersionOverride: Required value: is required when "
  "the specified main container image has no parseable semantic-version tag\"; set dynamo.runtimeVersionOverride to the Dynamo "
  "version the image runs, e.g. 1.2.1") (toString .Values.dynamo.image.tag)) }}
{{- end }}

{{- /* The component fields a release serves (the line's record); minAvailable only on the Grove pathway. */}}
{{- $since := (index . (include "gpt-oss.object" (list "gpt-oss.dynamoRelease" .))).admission.componentFieldsSince }}
{{- range $field, $release := $since }}
{{- /* Rule: a component field only from the Dynamo release that serves it. */}}
{{- if and (hasKey $fields $field) (semverCompare (printf "<%s" $release) $runtime.version) }}
{{- fail (printf (print "workers.componentFields.%s exists in DynamoGraphDeployments from Dynamo %s, but the runtime is %s (%s) "
  "and the chart assumes the platform runs that release; use a %s or later image, or leave %s out")
  $field $release $runtime.version $runtime.source $release $field) }}
{{- end }}
{{- end }}
{{- if hasKey $fields "minAvailable" }}
{{- /* Rule: minAvailable only on the Grove pathway. */}}
{{- if not .Values.dynamo.grove }}
{{- fail (print "workers.componentFields.minAvailable is set, but dynamo.grove=false: the Dynamo operator refuses it on DGDs "
  "that Grove does not place (\"minAvailable: Forbidden: is currently supported only for Grove-backed DynamoGraphDeployment "
  "components\"); set dynamo.grove=true when the platform runs Grove (global.grove.enabled), or leave minAvailable out") }}
{{- end }}
{{- end }}

{{- /* Topology constraints: a component's needs the deployment-level one, and every constraint a packDomain. */}}
{{- /* Rule: a component topology constraint needs the deployment-level one. */}}
{{- if and (hasKey $fields "topologyConstraint") (not $constraint.clusterTopologyName) }}
{{- fail (print "workers.componentFields.topologyConstraint is set, but dynamo.topologyConstraint.clusterTopologyName is empty: "
  "the Dynamo operator refuses a component topology constraint without a deployment-level one (\"spec.topologyConstraint: "
  "Required value: is required when any component topology constraint is set\"); set "
  "dynamo.topologyConstraint.clusterTopologyName and dynamo.topologyConstraint.packDomain") }}
{{- end }}
{{- /* Rule: every component topology constraint has a packDomain. */}}
{{- if and (hasKey $fields "topologyConstraint") (not (get (default dict $fields.topologyConstraint) "packDomain")) }}
{{- fail (print "workers.componentFields.topologyConstraint has no packDomain: the Dynamo operator requires one on every "
  "component constraint (\"topologyConstraint.packDomain is required\"); set "
  "workers.componentFields.topologyConstraint.packDomain to a domain of the ClusterTopology, e.g. rack") }}
{{- end }}
{{- /* Rule: a deployment-level packDomain names its ClusterTopology. */}}
{{- if and $constraint.packDomain (not $constraint.clusterTopologyName) }}
{{- fail (printf (print "dynamo.topologyConstraint.packDomain=%s needs dynamo.topologyConstraint.clusterTopologyName: "
  "spec.topologyConstraint names the ClusterTopology its domains come from; set it, or empty packDomain") $constraint.packDomain) }}
{{- end }}
{{- /* Rule: a deployment-level ClusterTopology needs a packDomain (the Frontend carries no constraint of its own). */}}
{{- if and $constraint.clusterTopologyName (not $constraint.packDomain) }}
{{- fail (printf (print "dynamo.topologyConstraint.clusterTopologyName=%s is set without dynamo.topologyConstraint.packDomain, "
  "and the Frontend carries no constraint of its own: the Dynamo operator then refuses the DGD (1.5: "
  "\"spec.topologyConstraint.packDomain: Required value: is required when no component topologyConstraint is set\"; "
  "1.2: \"spec.services[Frontend].topologyConstraint is required because spec.topologyConstraint.packDomain is not set\"); "
  "set dynamo.topologyConstraint.packDomain, e.g. rack") $constraint.clusterTopologyName) }}
{{- end }}
{{- end }}
{{- end }}
