{{- /* Disruption budgets: one PodDisruptionBudget per role, selecting the pods that role really runs. */}}

{{/*
The budgets to render, one per role: name, the role's replicas, and the pod selector. Dynamo pods are
selected by the labels the operator itself puts on every pod of a component, on the Grove and on the
Deployment pathway alike (nvidia.com/dynamo-graph-deployment-name and nvidia.com/dynamo-component, the
DGD component name; tests/chart/exposure/test_exposure.py cites the operator source); trtllm-serve pods by the
Deployment's own selector.
Usage: {{ range include "gpt-oss.disruptionBudgets" . | fromJsonArray }}
*/}}
{{- define "gpt-oss.disruptionBudgets" -}}
{{- $plan := index . (include "gpt-oss.object" (list "gpt-oss.plan" .)) }}
{{- $fullname := include "gpt-oss.fullname" . }}
{{- $budgets := list }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $budgets = append $budgets (dict "name" (include "gpt-oss.trtllmServe.name" .) "role" "trtllm-serve" "replicas" (int .Values.trtllmServe.replicas)
  "selector" (include "gpt-oss.trtllmServe.selectorLabels" . | fromYaml)) }}
{{- else }}
{{- $operatorLabels := dict "nvidia.com/dynamo-graph-deployment-name" $fullname }}
{{- $budgets = append $budgets (dict "name" (printf "%s-frontend" $fullname) "role" "frontend" "replicas" (int .Values.frontend.replicas) "selector"
  (merge (dict "nvidia.com/dynamo-component" "Frontend") $operatorLabels)) }}
{{- range $plan.roles }}
{{- $budgets = append $budgets (dict "name" (printf "%s-%s" $fullname .key) "role" .key "replicas" (int .replicas) "selector"
  (merge (dict "nvidia.com/dynamo-component" .component) $operatorLabels)) }}
{{- end }}
{{- end }}
{{- toJson $budgets }}
{{- end }}
