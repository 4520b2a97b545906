{{- /* Dynamo release lines: what differs between the lines the chart renders for (facts:
../shared/DYNAMO-RELEASES-FACTS.md, sections 0, 3 and 4; docs/targets.md, "Dynamo release lines"). */}}

{{/*
Every release line the chart renders for, keyed by line ("1.2", "1.6", "1.7"); one record per line:
  line: the line's name, MAJOR.MINOR
  runtime: the Dynamo runtime the line pins (tag) and the runtime versions that take its shape
    (from <= version < below): dynamo.image.tag or dynamo.runtimeVersionOverride outside it is refused
  images: image names beside dynamo.image.repository's registry path: runtime (worker and frontend: the chart runs
    dynamo.frontend from the runtime image), planner (Dynamo's own planner image from 1.1.0)
  api: the DGD apiVersion and shape the chart writes (components: spec.components[] + podTemplate, container main)
  worker: modelFlag, the dynamo.trtllm flag naming the model (--model from the 1.3 line's code; --model-path is
    its alias, accepted by 1.2.1 to 1.7.0.dev); admissionGate, the backend admission gate's environment (1.7: the
    DYN_BACKEND_ADMISSION_* variables, per DP rank, off unless a limit is set), "" where the chart renders none
  frontend: routerQueueThreshold, rendered under frontend.routerMode=kv when the runtime is 1.4.0 or newer (1.4.0
    turned router queueing off by default; 16.0 was the 1.3 default), "" on a line whose frontend deprecates the flag
    (1.7: "will be removed in v1.7", replaced by --router-policy-config); adminApi, the frontend admin API's default
  operatorDefaults: what the operator injects and the chart leaves alone: reservedEnv (refused in workers env),
    systemPort, livenessFailureThreshold, healthChecks (worker canary checks), reservedInitContainers,
    mainContainer
  epp: the Dynamo endpoint picker of the line (the chart renders none for Dynamo) and its eppConfig rule
  admission: componentFieldsSince (a component field and the release whose operator admits it), and
    runtimeVersionOverride (when the operator needs it)
  platform: the Dynamo platform the line needs: operator, Grove, KAI scheduler, CRDs
Usage: {{ $lines := include "gpt-oss.dynamoReleases" . | fromYaml }}
*/}}
{{- define "gpt-oss.dynamoReleases" -}}
"1.2":
  line: "1.2"
  runtime:
    tag: 1.2.1
    from: 1.2.0
    below: 1.5.0
  images:
    runtime: tensorrtllm-runtime
    planner: dynamo-planner
  api:
    version: nvidia.com/v1beta1
    shape: components
  worker:
    modelFlag: --model-path
    admissionGate: ""
  frontend:
    routerQueueThreshold: "16.0"
    adminApi: "off before 1.3.0, on from 1.3.0"
  operatorDefaults:
    reservedEnv: [DYN_SYSTEM_PORT]
    systemPort: 9090
    livenessFailureThreshold: 1
    healthChecks: "off"
    reservedInitContainers: []
    mainContainer: main
  epp:
    kind: "Go EPP, a DGD component of type epp"
    eppConfig: required
  admission:
    componentFieldsSince:
      minAvailable: 1.3.0
      providerOverride: 1.5.0
    runtimeVersionOverride: "needed from operator 1.4.0 when the image tag has no version"
  platform:
    operator: 1.2.x (1.2.x to 1.4.x admit it)
    grove: "the 1.2 platform chart's (not in the facts)"
    kaiScheduler: "the 1.2 platform chart's (not in the facts)"
    crds: "the 1.2.x platform's (v1beta1 served, v1alpha1 storage)"
"1.6":
  line: "1.6"
  runtime:
    tag: 1.6.2
    from: 1.5.0
    below: 1.7.0
  images:
    runtime: tensorrtllm-runtime
    planner: dynamo-planner
  api:
    version: nvidia.com/v1beta1
    shape: components
  worker:
    modelFlag: --model
    admissionGate: ""
  frontend:
    routerQueueThreshold: "16.0"
    adminApi: "on"
  operatorDefaults:
    reservedEnv: [DYN_SYSTEM_PORT]
    systemPort: 9090
    livenessFailureThreshold: 3
    healthChecks: "on (DYN_HEALTH_CHECK_ENABLED=false opts out)"
    reservedInitContainers: [runtime]
    mainContainer: main
  epp:
    kind: "Rust EPP inside the frontend image"
    eppConfig: forbidden
  admission:
    componentFieldsSince:
      minAvailable: 1.3.0
      providerOverride: 1.5.0
    runtimeVersionOverride: "needed when the image tag has no version"
  platform:
    operator: 1.6.x (1.5.x to 1.8.x admit it)
    grove: ">= v0.1.0-alpha.14"
    kaiScheduler: ">= v0.17.0"
    crds: "the 1.6.x platform's (v1beta1 served and stored)"
"1.7":
  line: "1.7"
  runtime:
    tag: 1.7.0
    from: 1.7.0
    below: 1.8.0
  images:
    runtime: tensorrtllm-runtime
    planner: dynamo-planner
  api:
    version: nvidia.com/v1beta1
    shape: components
  worker:
    modelFlag: --model
    admissionGate: DYN_BACKEND_ADMISSION
  frontend:
    routerQueueThreshold: ""
    adminApi: "on"
  operatorDefaults:
    reservedEnv: [DYN_SYSTEM_PORT]
    systemPort: 9090
    livenessFailureThreshold: 3
    healthChecks: "on (DYN_HEALTH_CHECK_ENABLED=false opts out)"
    reservedInitContainers: [runtime]
    mainContainer: main
  epp:
    kind: "Rust EPP inside the frontend image"
    eppConfig: forbidden
  admission:
    componentFieldsSince:
      minAvailable: 1.3.0
      providerOverride: 1.5.0
    runtimeVersionOverride: "needed when the image tag has no version"
  platform:
    operator: 1.7.x (1.6.x to 1.9.x admit it)
    grove: "minimum not published for 1.7 (1.6 needs >= v0.1.0-alpha.14)"
    kaiScheduler: "minimum not published for 1.7 (1.6 needs >= v0.17.0)"
    crds: "the 1.7.x platform's (v1beta1 served and stored; adds DGDR v1beta2, DynamoGraphDeploymentRun and DynamoGraphDeploymentCandidate)"
{{- end }}

{{/*
The selected release line's record (gpt-oss.dynamoReleases, keyed by gpt-oss.dynamoLine).
Usage: {{ $release := index . (include "gpt-oss.object" (list "gpt-oss.dynamoRelease" .)) }}
*/}}
{{- define "gpt-oss.dynamoRelease" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeDynamoRelease" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.dynamoRelease, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeDynamoRelease" . }} (templates read it through gpt-oss.dynamoRelease)
*/}}
{{- define "gpt-oss.computeDynamoRelease" -}}
{{- toJson (get (include "gpt-oss.dynamoReleases" . | fromYaml) (include "gpt-oss.dynamoLine" .)) }}
{{- end }}

{{/*
Every Dynamo minor from the oldest line to the newest, each with the patch the chart names for it and the line
whose shape runs it: the one-minor-at-a-time upgrade path (facts, section 4).
Usage: {{ $minors := include "gpt-oss.dynamoMinors" . | fromYamlArray }}
*/}}
{{- define "gpt-oss.dynamoMinors" -}}
- {minor: "1.2", tag: 1.2.1, line: "1.2"}
- {minor: "1.3", tag: 1.3.1, line: "1.2"}
- {minor: "1.4", tag: 1.4.1, line: "1.2"}
- {minor: "1.5", tag: 1.5.1, line: "1.6"}
- {minor: "1.6", tag: 1.6.2, line: "1.6"}
- {minor: "1.7", tag: 1.7.0, line: "1.7"}
{{- end }}

{{/*
The Dynamo runtime image, whole: dynamo.image with an empty tag replaced by the release line's own.
Usage: {{ $image := index . (include "gpt-oss.object" (list "gpt-oss.dynamoImage" .)) }}
*/}}
{{- define "gpt-oss.dynamoImage" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeDynamoImage" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.dynamoImage, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeDynamoImage" . }} (templates read it through gpt-oss.dynamoImage)
*/}}
{{- define "gpt-oss.computeDynamoImage" -}}
{{- $image := deepCopy .Values.dynamo.image }}
{{- if eq (toString $image.tag) "" }}
{{- $_ := set $image "tag" (index . (include "gpt-oss.object" (list "gpt-oss.dynamoRelease" .))).runtime.tag }}
{{- end }}
{{- toJson $image }}
{{- end }}
