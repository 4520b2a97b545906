{{- /* The model cache: where the weights come from, its claim or image volume, paths, and the init containers that wait for it or check it. */}}

{{/*
Everything the chart derives from modelCache.source, in one place (NOTES, the Job and every pod read it):
source; imageVolume (an OCI image mounted read-only in every pod, no PVC); pvc (the pods mount a claim);
job (the download Job renders); from (where the weights come from); check (how every copy is checked);
disk (what each pod needs on disk); follow (the Job's log command, or empty).
Usage: {{ $source := include "gpt-oss.modelSource" . | fromYaml }}
*/}}
{{- define "gpt-oss.modelSource" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeModelSource" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.modelSource, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeModelSource" . }} (templates read it through gpt-oss.modelSource)
*/}}
{{- define "gpt-oss.computeModelSource" -}}
{{- $mc := .Values.modelCache }}
{{- $imageVolume := and (eq $mc.source "oci") (eq $mc.oci.mount "imageVolume") }}
{{- $claim := include "gpt-oss.modelCache.claimName" . }}
{{- $pin := printf "a copy of another revision, or a manifest other than sha256 %s (modelCache.manifestSha256)" $mc.manifestSha256 }}
{{- $from := "" }}
{{- $check := "" }}
{{- if eq $mc.source "huggingface" }}
{{- $from = printf "the Hugging Face Hub at %s, %s@%s" (default "https://huggingface.co" $mc.huggingface.endpoint) .Values.model.id .Values.model.revision }}
{{- $check = printf (print "the download Job checks every file against the Hub's sizes and hashes (sha256, git blob sha1)%s, "
  "writes model-manifest.json, then the ready marker")
  (ternary (printf ", refuses a manifest other than sha256 %s (modelCache.manifestSha256)" $mc.manifestSha256) "" (ne $mc.manifestSha256 "")) }}
{{- else if eq $mc.source "s3" }}
{{- $from = printf "s3://%s/%s at %s (a copy made by tools/mirror-model.py)" $mc.s3.bucket (trimAll "/" $mc.s3.prefix)
  (default (printf "AWS %s" $mc.s3.region) $mc.s3.endpoint) }}
{{- $check = printf "the download Job refuses %s, checks every file's size and sha256 as it arrives, then writes the ready marker" $pin }}
{{- else if eq $mc.source "oci" }}
{{- $from = printf "the OCI image %s@%s (a copy made by tools/mirror-model.py)%s" $mc.oci.repository $mc.oci.digest
  (ternary ", mounted read-only in every pod (image volume, no PVC)" ", pulled by digest into the cache by the download Job" $imageVolume) }}
{{- if $imageVolume }}
{{- $check = printf (print "the verify-model init container of every worker refuses %s, and checks every file's sha256 before "
  "the containers start (the frontend's checks the vocabulary)") $pin }}
{{- else }}
{{- $check = printf "the download Job checks every layer's digest, refuses %s, checks every file's sha256, then writes the ready marker" $pin }}
{{- end }}
{{- else }}
{{- $from = printf "the copy already on the claim %s in %s" $claim (include "gpt-oss.modelPath" .) }}
{{- $check = printf "the check Job refuses %s, checks every file's sha256 (nothing is fetched), then writes the ready marker" $pin }}
{{- end }}
{{- $disk := list }}
{{- $weights := "the weights (~65 GB for openai/gpt-oss-120b without original/ and metal/)" }}
{{- if $imageVolume }}
{{- $disk = append $disk (printf "each node running a worker or the frontend holds the image, %s, in its container runtime's image store; no PVC" $weights) }}
{{- $disk = append $disk "pods need no other disk for the model: the image volume is read-only" }}
{{- else }}
{{- $size := ternary (printf "%s, %s, kept on uninstall" $mc.size $mc.accessMode) "an existing claim" (not $mc.existingClaim) }}
{{- $disk = append $disk (printf "PVC %s (%s) holds %s, shared by every pod; pods need no local disk for the model" $claim $size $weights) }}
{{- if and (eq $mc.source "oci") (not $imageVolume) }}
{{- $disk = append $disk "the download Job also keeps one image layer (the largest file) on that PVC while it unpacks it" }}
{{- end }}
{{- end }}
{{- $job := and (not $imageVolume) $mc.download.enabled }}
source: {{ $mc.source }}
imageVolume: {{ $imageVolume }}
pvc: {{ not $imageVolume }}
job: {{ $job }}
from: {{ $from | quote }}
check: {{ $check | quote }}
disk: {{ toYaml $disk | nindent 2 }}
{{- end }}

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
{{- if (include "gpt-oss.modelSource" . | fromYaml).imageVolume }}
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
{{- if (include "gpt-oss.modelSource" . | fromYaml).imageVolume }}
  image:
    reference: {{ printf "%s@%s" .Values.modelCache.oci.repository .Values.modelCache.oci.digest }}
    pullPolicy: IfNotPresent
{{- else }}
  persistentVolumeClaim:
    claimName: {{ include "gpt-oss.modelCache.claimName" . }}
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
instead of patching an immutable pod template.
Usage: {{ include "gpt-oss.downloadJobName" . }}
*/}}
{{- define "gpt-oss.downloadJobName" -}}
{{- $source := pick .Values.modelCache "source" "manifestSha256" "huggingface" "s3" "oci" "proxy" "caBundle" }}
{{- /* Helm 3 (Argo CD's repo-server) keeps the null defaults of values.yaml as keys, Helm 4 drops them: only keys
  that hold a value count, so both name the Job alike */}}
{{- $download := dict }}
{{- range $key, $value := .Values.modelCache.download }}
{{- if not (kindIs "invalid" $value) }}{{- $_ := set $download $key $value }}{{- end }}
{{- end }}
{{- $inputs := dict "model" .Values.model "download" $download "source" $source "mountPath" .Values.modelCache.mountPath "claim"
  (include "gpt-oss.modelCache.claimName" .) "labels" (include "gpt-oss.labels" (dict "root" . "component" "model-download")) }}
{{- printf "%s-model-download-%s" (include "gpt-oss.fullname" . | trunc 40 | trimSuffix "-") (toJson $inputs | sha256sum | trunc 8) }}
{{- end }}

{{/*
Name of the ServiceAccount the download Job runs as (source s3 with a workload identity), or empty.
Usage: {{ include "gpt-oss.modelFetchServiceAccount" . }}
*/}}
{{- define "gpt-oss.modelFetchServiceAccount" -}}
{{- $sa := .Values.modelCache.s3.serviceAccount }}
{{- if eq .Values.modelCache.source "s3" }}
{{- if $sa.create }}
{{- default (printf "%s-model-fetch" (include "gpt-oss.fullname" .)) $sa.name }}
{{- else }}
{{- $sa.name }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Environment of the download Job and the verify-model check: the model, the pinned manifest, the vocabulary.
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
Init container that holds a pod until the model cache is ready. With a PVC: waits for the download marker
that names the revision (and the manifest sha256) this release pins, and the vocabulary, saying what it waits
for; a marker of another revision or manifest, or a link, is not ready. With an image volume: checks the copy against its manifest
(every file, or only `paths`) and fails the pod naming any file that differs.
Usage: {{ include "gpt-oss.modelReadyContainer" (dict "root" . "paths" (list)) | nindent 8 }}
*/}}
{{- define "gpt-oss.modelReadyContainer" -}}
{{- $root := .root }}
{{- if (include "gpt-oss.modelSource" $root | fromYaml).imageVolume }}
{{- $image := $root.Values.modelCache.download.image }}
- name: verify-model
  image: {{ include "gpt-oss.image" $image }}
  imagePullPolicy: {{ $image.pullPolicy }}
  command: ["python3", "/opt/gpt-oss/scripts/download_model.py"]
  env:
    - name: SOURCE
      value: verify
    - name: COPY_NAME
      value: {{ printf "the image volume %s@%s" $root.Values.modelCache.oci.repository $root.Values.modelCache.oci.digest | quote }}
    {{- if .paths }}
    - name: VERIFY_PATHS
      value: {{ toJson .paths | quote }}
    {{- end }}
    {{- include "gpt-oss.modelCopyEnv" $root | nindent 4 }}
  securityContext: {{ include "gpt-oss.readOnlyContainerSecurityContext" $root | nindent 4 }}
  resources: {{ toYaml $root.Values.modelCache.verify.resources | nindent 4 }}
  volumeMounts:
    - name: model-cache
      mountPath: {{ include "gpt-oss.modelPath" $root }}
      readOnly: true
    - name: scripts
      mountPath: /opt/gpt-oss/scripts
      readOnly: true
{{- else }}
- name: wait-for-model
  image: {{ include "gpt-oss.image" $root.Values.waitForModel.image }}
  imagePullPolicy: {{ $root.Values.waitForModel.image.pullPolicy }}
  # The marker must name what this release pins (the download Job writes it last, and removes it first).
  env:
    - name: MARKER
      value: {{ include "gpt-oss.modelMarker" $root | quote }}
    - name: EXPECTED_REVISION
      value: {{ $root.Values.model.revision | quote }}
    {{- with $root.Values.modelCache.manifestSha256 }}
    - name: EXPECTED_MANIFEST_SHA256
      value: {{ . | quote }}
    {{- end }}
    {{- if $root.Values.model.tiktoken.stage }}
    - name: VOCABULARY
      value: {{ printf "%s/o200k_base.tiktoken" (include "gpt-oss.tiktokenDir" $root) | quote }}
    {{- end }}
  command:
    - sh
    - -c
    - |
      ready() {
        [ -f "$MARKER" ] && [ ! -L "$MARKER" ] || return 1
        grep -qF "\"revision\": \"$EXPECTED_REVISION\"" "$MARKER" || { echo "$MARKER names another revision than $EXPECTED_REVISION"; return 1; }
        if [ -n "${EXPECTED_MANIFEST_SHA256:-}" ]; then
          grep -qF "\"manifestSha256\": \"$EXPECTED_MANIFEST_SHA256\"" "$MARKER" ||{{/*
          */}} { echo "$MARKER names another manifest than $EXPECTED_MANIFEST_SHA256"; return 1; }
        fi
        if [ -n "${VOCABULARY:-}" ]; then
          [ -f "$VOCABULARY" ] && [ ! -L "$VOCABULARY" ] || return 1
        fi
      }
      until ready; do
        echo "waiting for $MARKER: the model-cache download Job ({{ include "gpt-oss.downloadJobName"
          $root }}) writes it when {{ $root.Values.model.id }}@{{ $root.Values.model.revision }} is complete and checked"
        sleep "${POLL_SECONDS:-30}"
      done
      echo "model cache ready: $MARKER"
  securityContext: {{ include "gpt-oss.readOnlyContainerSecurityContext" $root | nindent 4 }}
  resources:
    requests:
      cpu: 10m
      memory: 16Mi
    limits:
      memory: 32Mi
  volumeMounts:
    - name: model-cache
      mountPath: {{ $root.Values.modelCache.mountPath }}
      readOnly: true
{{- end }}
{{- end }}

{{/*
The ready check of a worker pod: the whole copy (see gpt-oss.modelReadyContainer).
Usage: {{ include "gpt-oss.waitForModelContainer" . | nindent 8 }}
*/}}
{{- define "gpt-oss.waitForModelContainer" -}}
{{- include "gpt-oss.modelReadyContainer" (dict "root" . "paths" list) }}
{{- end }}

{{/*
Volumes the ready check needs besides model-cache: the scripts ConfigMap, for the image-volume check.
Usage: {{ include "gpt-oss.modelReadyVolumes" . | nindent 8 }}
*/}}
{{- define "gpt-oss.modelReadyVolumes" -}}
{{- if (include "gpt-oss.modelSource" . | fromYaml).imageVolume }}
- name: scripts
  configMap:
    name: {{ include "gpt-oss.scriptsConfigMap" . }}
{{- end }}
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
TCP ports the download Job connects to, sorted: those of the source's URL (Hub or mirror, S3 endpoint, registry),
the proxies and the vocabulary URL; 443 where a URL names none over HTTPS, 80 over HTTP.
Usage: {{ include "gpt-oss.modelFetchPorts" . | fromYamlArray }}
*/}}
{{- define "gpt-oss.modelFetchPorts" -}}
{{- $mc := .Values.modelCache }}
{{- $urls := list }}
{{- if eq $mc.source "huggingface" }}{{ $urls = append $urls (default "https://huggingface.co" $mc.huggingface.endpoint) }}{{ end }}
{{- if eq $mc.source "s3" }}{{ $urls = append $urls (default "https://s3.amazonaws.com" $mc.s3.endpoint) }}{{ end }}
{{- if eq $mc.source "oci" }}{{ $urls = append $urls
  (printf "%s://%s" (ternary "http" "https" $mc.oci.plainHttp) (first (splitList "/" $mc.oci.repository))) }}{{ end }}
{{- if .Values.model.tiktoken.stage }}{{ $urls = append $urls .Values.model.tiktoken.url }}{{ end }}
{{- with $mc.proxy.httpsProxy }}{{ $urls = append $urls . }}{{ end }}
{{- with $mc.proxy.httpProxy }}{{ $urls = append $urls . }}{{ end }}
{{- $ports := list }}
{{- range $urls }}
{{- $url := urlParse . }}
{{- $port := regexFind ":[0-9]+$" $url.host | trimPrefix ":" }}
{{- $ports = append $ports (printf "%05d" (atoi (default (ternary "80" "443" (eq $url.scheme "http")) $port))) }}
{{- end }}
{{- /* Zero-padded, so that the string sort is numeric. */}}
{{- $sorted := list }}
{{- range sortAlpha (uniq $ports) }}{{ $sorted = append $sorted (atoi .) }}{{ end }}
{{- toYaml $sorted }}
{{- end }}
