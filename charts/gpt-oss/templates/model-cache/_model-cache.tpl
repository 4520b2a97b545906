{{- /* The model cache: its claim or image volume, paths, and the check-model init container that holds pods until it is ready. */}}

{{/*
Name of the model-cache PVC: the existing claim when given, else the chart's own.
Usage: {{ include "gpt-oss.modelCache.claimName" . }}
*/}}
{{- define "gpt-oss.modelCache.claimName" -}}
{{- default (printf "%s-model-cache" (include "gpt-oss.fullname" .)) .Values.modelCache.existingClaim }}
{{- end }}

{{/*
Directory of the model weights inside every pod.
Usage: {{ include "gpt-oss.modelPath" . }}
*/}}
{{- define "gpt-oss.modelPath" -}}
{{- printf "%s/%s" (trimSuffix "/" .Values.modelCache.mountPath) .Values.model.id }}
{{- end }}

{{/*
Where pods mount the model-cache volume: the PVC at modelCache.mountPath, an image volume (whose root is the
copy) at the model's directory.
Usage: {{ include "gpt-oss.modelCache.mountPoint" . }}
*/}}
{{- define "gpt-oss.modelCache.mountPoint" -}}
{{- if (index . (include "gpt-oss.object" (list "gpt-oss.modelSource" .))).imageVolume }}
{{- include "gpt-oss.modelPath" . }}
{{- else }}
{{- .Values.modelCache.mountPath }}
{{- end }}
{{- end }}

{{/*
The model-cache volume of a pod: the cache PVC, or the OCI image of source oci with mount imageVolume.
Usage: {{ include "gpt-oss.modelCache.volume" . | nindent 8 }}
*/}}
{{- define "gpt-oss.modelCache.volume" -}}
- name: model-cache
{{- if (index . (include "gpt-oss.object" (list "gpt-oss.modelSource" .))).imageVolume }}
  image:
    reference: {{ printf "%s@%s" .Values.modelCache.oci.repository .Values.modelCache.oci.digest | quote }}
    pullPolicy: IfNotPresent
{{- else }}
  persistentVolumeClaim:
    claimName: {{ include "gpt-oss.modelCache.claimName" . | quote }}
{{- end }}
{{- end }}

{{/*
Marker file the download Job writes when the pinned revision is complete; workers wait for it.
Usage: {{ include "gpt-oss.modelMarker" . }}
*/}}
{{- define "gpt-oss.modelMarker" -}}
{{- printf "%s/.download-complete-%s" (include "gpt-oss.modelPath" .) .Values.model.revision }}
{{- end }}

{{/*
Directory of the staged harmony vocabulary (o200k_base.tiktoken): inside the model's directory, so it travels
with every copy (tools/mirror-model.py puts it there too).
Usage: {{ include "gpt-oss.tiktokenDir" . }}
*/}}
{{- define "gpt-oss.tiktokenDir" -}}
{{- printf "%s/tiktoken" (include "gpt-oss.modelPath" .) }}
{{- end }}

{{/*
Name of the download Job, suffixed with a hash of what its pod runs and of its pod labels: a changed
image, version, revision or source, or a new chart version (helm.sh/chart), makes a new Job on upgrade
instead of patching an immutable pod template. The longest name the chart makes (fullname + 24): gpt-oss.checkValues.names
refuses a fullname that takes it over 63 (a Job's name is its pods' job-name label).
Usage: {{ include "gpt-oss.downloadJobName" . }}
*/}}
{{- define "gpt-oss.downloadJobName" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeDownloadJobName" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.downloadJobName, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeDownloadJobName" . }} (templates read it through gpt-oss.downloadJobName)
*/}}
{{- define "gpt-oss.computeDownloadJobName" -}}
{{- $source := pick .Values.modelCache "source" "manifestSha256" "proxy" "caBundle" }}
{{- /* Each source's own values (modelCache.<source>, where it has any). */}}
{{- range $name, $_ := index . (include "gpt-oss.object" (list "gpt-oss.modelSources" .)) }}
{{- with get $.Values.modelCache $name }}{{ $_ := set $source $name . }}{{ end }}
{{- end }}
{{- /* Helm 3 (Argo CD's repo-server) keeps the null defaults of values.yaml as keys, Helm 4 drops them: only keys
  that hold a value count, so both name the Job alike */}}
{{- $download := dict }}
{{- range $key, $value := .Values.modelCache.download }}
{{- if not (kindIs "invalid" $value) }}{{- $_ := set $download $key $value }}{{- end }}
{{- end }}
{{- $inputs := dict "model" .Values.model "download" $download "source" $source "mountPath" .Values.modelCache.mountPath "claim"
  (include "gpt-oss.modelCache.claimName" .) "labels" (include "gpt-oss.labels" (dict "root" . "component" "model-download")) }}
{{- printf "%s-model-download-%s" (include "gpt-oss.fullname" .) (toJson $inputs | sha256sum | trunc 8) }}
{{- end }}

{{/*
Environment of the download Job and the check-model init container: the model, the pinned manifest, the vocabulary.
Usage: {{ include "gpt-oss.modelCopyEnv" . | nindent 12 }}
*/}}
{{- define "gpt-oss.modelCopyEnv" -}}
- name: MODEL_ID
  value: {{ .Values.model.id | quote }}
- name: MODEL_REVISION
  value: {{ .Values.model.revision | quote }}
- name: MODEL_DIR
  value: {{ include "gpt-oss.modelPath" . | quote }}
{{- /* No empty values: the API server drops them, and the stored object would differ from the rendered one. */}}
{{- with .Values.modelCache.manifestSha256 }}
- name: MANIFEST_SHA256
  value: {{ . | quote }}
{{- end }}
{{- if .Values.model.tiktoken.stage }}
- name: TIKTOKEN_URL
  value: {{ .Values.model.tiktoken.url | quote }}
- name: TIKTOKEN_SHA256
  value: {{ .Values.model.tiktoken.sha256 | quote }}
- name: TIKTOKEN_DIR
  value: {{ include "gpt-oss.tiktokenDir" . | quote }}
{{- end }}
- name: HOME
  value: /tmp
- name: PYTHONDONTWRITEBYTECODE
  value: "1"
{{- end }}

{{/*
The model-ready check of a serving pod, whole: the check-model init container. It runs files/check_model.py, the
chart's one check of a copy, in the download image, as the source's record says (gpt-oss.modelSources, checker):
marker (a PVC the download Job fills): wait until the Job's ready marker names the revision and manifest sha256
this release pins, and the vocabulary is in place, saying what it waits for; verify (an image volume): check every
file, or only `paths`, against the copy's manifest, and fail the pod naming any file that differs. The pod mounts
the model-cache and scripts volumes (gpt-oss.modelCache.volume, gpt-oss.scriptsVolume).
Usage: {{ include "gpt-oss.checkModelContainer" (dict "root" . "paths" (list)) | nindent 8 }}
*/}}
{{- define "gpt-oss.checkModelContainer" -}}
{{- $root := .root }}
{{- $source := index $root (include "gpt-oss.object" (list "gpt-oss.modelSource" $root)) }}
{{- $image := $root.Values.modelCache.download.image }}
- name: check-model
  image: {{ include "gpt-oss.image" $image | quote }}
  imagePullPolicy: {{ $image.pullPolicy }}
  command: ["python3", "/opt/gpt-oss/scripts/check_model.py"]
  env:
    - name: CHECK
      value: {{ $source.checker }}
    {{- if eq $source.checker "verify" }}
    - name: COPY_NAME
      value: {{ printf "the image volume %s@%s" $root.Values.modelCache.oci.repository $root.Values.modelCache.oci.digest | quote }}
    {{- if .paths }}
    - name: VERIFY_PATHS
      value: {{ toJson .paths | quote }}
    {{- end }}
    {{- else }}
    # The marker must name what this release pins (the download Job writes it last, and removes it first).
    - name: MARKER
      value: {{ include "gpt-oss.modelMarker" $root | quote }}
    - name: DOWNLOAD_JOB
      value: {{ include "gpt-oss.downloadJobName" $root | quote }}
    {{- end }}
    {{- include "gpt-oss.modelCopyEnv" $root | nindent 4 }}
  securityContext: {{ include "gpt-oss.readOnlyContainerSecurityContext" $root | nindent 4 }}
  {{- if eq $source.checker "verify" }}
  resources: {{ toYaml $root.Values.modelCache.verify.resources | nindent 4 }}
  {{- else }}
  # Waiting reads one small file every 30 s (Python peaks at ~21 MiB doing it).
  resources:
    requests:
      cpu: 10m
      memory: 32Mi
    limits:
      memory: 64Mi
  {{- end }}
  volumeMounts:
    - name: model-cache
      mountPath: {{ include "gpt-oss.modelCache.mountPoint" $root | quote }}
      readOnly: true
    - name: scripts
      mountPath: /opt/gpt-oss/scripts
      readOnly: true
{{- end }}

{{/*
Paths of the dynamo.imagePullSecrets' .dockerconfigjson files in the download Job (source oci, mount pull),
colon-separated.
Usage: {{ include "gpt-oss.registryAuthFiles" . }}
*/}}
{{- define "gpt-oss.registryAuthFiles" -}}
{{- $files := list }}
{{- range $i, $_ := .Values.dynamo.imagePullSecrets }}
{{- $files = append $files (printf "/var/run/secrets/registry/%d/config.json" $i) }}
{{- end }}
{{- join ":" $files }}
{{- end }}

{{/*
The models the chart serves, each with the revisions it knows: model.id must be one of them and model.revision one
of its revisions (gpt-oss.checkValues.paths), so a model the pinned revision does not belong to is never served.
The sizes, engine settings and sizing tables of the chart are openai/gpt-oss-120b's (../shared/FACTS.md).
Usage: {{ $known := include "gpt-oss.knownModels" . | fromYaml }}
*/}}
{{- define "gpt-oss.knownModels" -}}
openai/gpt-oss-120b:
  - b5c939de8f754692c1647ca79fbf85e8c1e70f8a
{{- end }}

{{/*
What each model of gpt-oss.knownModels holds at its pinned revision, by folder: a file name of the folder (what
ignore patterns are matched against, with huggingface_hub's fnmatch rules), the folder's size in GiB and what it is. FACTS.md,
Model: the weights take 60.8 GiB once original/ and metal/ are skipped (line 15), and original/ and metal/ are each
another full copy of the weights (line 13), sized here as the weights. No per-file listing of the revision is in the
shared facts, so a pattern that skips part of a folder counts the whole folder as long as it matches its file name.
Usage: {{ $files := get (include "gpt-oss.modelFiles" . | fromYaml) .Values.model.id }}
*/}}
{{- define "gpt-oss.modelFiles" -}}
openai/gpt-oss-120b:
  - {what: the weights, file: model-00000-of-00014.safetensors, gib: 60.8}
  - {what: "original/ (another full copy)", file: original/model--00001-of-00007.safetensors, gib: 60.8}
  - {what: "metal/ (another full copy)", file: metal/model.bin, gib: 60.8}
{{- end }}

{{/*
Whether a file name matches a snapshot_download ignore pattern, "true" or "": fnmatch rules as huggingface_hub and
files/model_copy.py apply them (* and ? match any character, / included; [seq] and [!seq]; a pattern ending in / gets *).
Usage: {{ if include "gpt-oss.globMatch" (dict "pattern" "original/*" "name" "original/config.json") }}
*/}}
{{- define "gpt-oss.globMatch" -}}
{{- $pattern := ternary (printf "%s*" .pattern) .pattern (hasSuffix "/" .pattern) }}
{{- $regex := regexQuoteMeta $pattern | replace "\\*" ".*" | replace "\\?" "." }}
{{- if regexMatch `\[[^\]]+\]` $pattern }}
{{- $regex = $regex | replace "\\[!" "[^" | replace "\\[" "[" | replace "\\]" "]" }}
{{- end }}
{{- if regexMatch (printf "^(?s:%s)$" $regex) .name }}true{{ end }}
{{- end }}

{{/*
Where the pods that mount the model cache can run: singleNode (a ReadWriteOnce or ReadWriteOncePod claim, which one
node (one pod) mounts at a time), pods (who mounts it), spans (true when those pods can land on more than one node, or
be more than one pod for ReadWriteOncePod), why (what lets them spread), pinnedBy (what keeps the serving pods on one
node today), holder (one node, or one pod) and fix (the value that would keep them there).
gpt-oss.checkValues.placement refuses a single-node claim that spans; gpt-oss.safetyWarnings warns about one that does
not.
Usage: {{ $cache := index . (include "gpt-oss.object" (list "gpt-oss.cachePlacement" .)) }}
*/}}
{{- define "gpt-oss.cachePlacement" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeCachePlacement" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.cachePlacement, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeCachePlacement" . }} (templates read it through gpt-oss.cachePlacement)
*/}}
{{- define "gpt-oss.computeCachePlacement" -}}
{{- $source := index . (include "gpt-oss.object" (list "gpt-oss.modelSource" .)) }}
{{- $plan := index . (include "gpt-oss.object" (list "gpt-oss.plan" .)) }}
{{- $mode := .Values.modelCache.accessMode }}
{{- $trtllmServe := eq .Values.runtime "trtllm-serve" }}
{{- $pods := list }}
{{- if $source.job }}{{ $pods = append $pods "the download Job" }}{{ end }}
{{- $serving := 0 }}
{{- $parts := list }}
{{- $unbounded := false }}
{{- range $plan.roles }}
{{- $count := ternary (int .maxReplicas) (int .replicas) (ne .scaledBy "") }}
{{- if and (eq .scaledBy "planner") }}{{ $unbounded = true }}{{ end }}
{{- $serving = add $serving $count }}
{{- $parts = append $parts (printf "%s: %s" .valuesKey (ternary "scaled by the planner" (printf "%d pod(s)" $count) (eq .scaledBy "planner"))) }}
{{- end }}
{{- $pods = append $pods (printf "%s pods (%s)" (ternary "the trtllm-serve" "the worker" $trtllmServe) (join ", " $parts)) }}
{{- if and (not $trtllmServe) .Values.model.tiktoken.stage }}{{ $pods = append $pods "the frontend" }}{{ end }}
{{- if .Values.benchmark.enabled }}{{ $pods = append $pods "the benchmark" }}{{ end }}
{{- $pinned := and (not $trtllmServe) .Values.workers.sameNode }}
{{- $spans := false }}
{{- $why := "" }}
{{- if eq $mode "ReadWriteOncePod" }}
{{- $spans = true }}
{{- $why = "more than one pod mounts it" }}
{{- else if and (not $pinned) (or $unbounded (gt $serving 1)) }}
{{- $spans = true }}
{{- $why = printf "%s can land on different nodes (%s)" (ternary "the trtllm-serve pods" "the worker pods" $trtllmServe)
  (ternary "each replica is a pod of its own" "workers.sameNode=false" $trtllmServe) }}
{{- end }}
singleNode: {{ and $source.pvc (ne $mode "ReadWriteMany") }}
pods: {{ toYaml $pods | nindent 2 }}
spans: {{ $spans }}
why: {{ $why | quote }}
pinnedBy: {{ ternary "workers.sameNode=true" "a single serving pod" $pinned | quote }}
holder: {{ ternary "one pod" "one node" (eq $mode "ReadWriteOncePod") | quote }}
fix: {{ ternary "trtllmServe.replicas=1 (no autoscaling)" "workers.sameNode=true" $trtllmServe | quote }}
{{- end }}
