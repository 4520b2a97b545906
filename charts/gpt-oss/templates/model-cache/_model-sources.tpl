{{- /* Model sources: one record per modelCache.source, read by the Job, the pods' check, the NetworkPolicy, NOTES and the rules. */}}

{{/*
Every source the weights can come from, keyed by modelCache.source, one record per source (computed once per
render: gpt-oss.memo); a new source is one record here, its Job part in _model-fetch.tpl and its schema enum:
  name: the source
  copy: a copy tools/mirror-model.py made, pinned by modelCache.manifestSha256 (the Hub's files are pinned by the
    revision and checked against the Hub's own hashes)
  settingKey, settingValue: the value that names the source's store, which is refused while another source is
    chosen ("" for none)
  endpoint: the URL the download Job reaches, the value or the source's default ("" when it reaches none)
  from: where the weights come from, as NOTES says it
  check: how the copy is checked before any container reads it
  jobTask: what the download Job does, download or check ("" when the source needs no Job: an image volume)
  checker: what the check-model init container of each serving pod does: marker (wait for the Job's ready marker)
    or verify (check every file of a read-only copy)
  serviceAccount: the ServiceAccount the download Job runs as ("" for the namespace's default)
  fetch: the define of the Job's env, volumeMounts and volumes for the source (_model-fetch.tpl)
Usage: {{ $sources := index . (include "gpt-oss.object" (list "gpt-oss.modelSources" .)) }}
*/}}
{{- define "gpt-oss.modelSources" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeModelSources" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.modelSources, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeModelSources" . }} (templates read it through gpt-oss.modelSources)
*/}}
{{- define "gpt-oss.computeModelSources" -}}
{{- $mc := .Values.modelCache }}
{{- $model := printf "%s@%s" .Values.model.id .Values.model.revision }}
{{- $pin := printf "a copy of another revision, or a manifest other than sha256 %s (modelCache.manifestSha256)" $mc.manifestSha256 }}
{{- $imageVolume := eq $mc.oci.mount "imageVolume" }}
{{- $hub := default "https://huggingface.co" $mc.huggingface.endpoint }}
{{- $s3 := default "https://s3.amazonaws.com" $mc.s3.endpoint }}
{{- $sa := $mc.s3.serviceAccount }}
huggingface:
  name: huggingface
  copy: false
  settingKey: modelCache.huggingface.endpoint
  settingValue: {{ $mc.huggingface.endpoint | quote }}
  endpoint: {{ $hub | quote }}
  from: {{ printf "the Hugging Face Hub at %s, %s" $hub $model | quote }}
  check: {{ printf (print "the download Job checks every file against the Hub's sizes and hashes (sha256, git blob sha1)%s, "
    "writes model-manifest.json, then the ready marker")
    (ternary (printf ", refuses a manifest other than sha256 %s (modelCache.manifestSha256)" $mc.manifestSha256) "" (ne $mc.manifestSha256 ""))
    | quote }}
  jobTask: download
  checker: marker
  serviceAccount: ""
  fetch: gpt-oss.modelFetch.huggingface
s3:
  name: s3
  copy: true
  settingKey: modelCache.s3.bucket
  settingValue: {{ $mc.s3.bucket | quote }}
  endpoint: {{ $s3 | quote }}
  from: {{ printf "s3://%s/%s at %s (a copy made by tools/mirror-model.py)" $mc.s3.bucket (trimAll "/" $mc.s3.prefix)
    (default (printf "AWS %s" $mc.s3.region) $mc.s3.endpoint) | quote }}
  check: {{ printf "the download Job refuses %s, checks every file's size and sha256 as it arrives, then writes the ready marker" $pin | quote }}
  jobTask: download
  checker: marker
  {{- /* A workload identity: the ServiceAccount the chart creates (named, or <fullname>-model-fetch), or the user's. */}}
  serviceAccount: {{ ternary (default (printf "%s-model-fetch" (include "gpt-oss.fullname" .)) $sa.name) $sa.name $sa.create | quote }}
  fetch: gpt-oss.modelFetch.s3
oci:
  name: oci
  copy: true
  settingKey: modelCache.oci.repository
  settingValue: {{ $mc.oci.repository | quote }}
  endpoint: {{ printf "%s://%s" (ternary "http" "https" $mc.oci.plainHttp) (first (splitList "/" $mc.oci.repository)) | quote }}
  from: {{ printf "the OCI image %s@%s (a copy made by tools/mirror-model.py)%s" $mc.oci.repository $mc.oci.digest
    (ternary ", mounted read-only in every pod (image volume, no PVC)" ", pulled by digest into the cache by the download Job" $imageVolume)
    | quote }}
  {{- if $imageVolume }}
  check: {{ printf (print "the check-model init container of every worker refuses %s, and checks every file's sha256 before "
    "the containers start (the frontend's checks the vocabulary)") $pin | quote }}
  jobTask: ""
  checker: verify
  {{- else }}
  check: {{ printf "the download Job checks every layer's digest, refuses %s, checks every file's sha256, then writes the ready marker" $pin
    | quote }}
  jobTask: download
  checker: marker
  {{- end }}
  serviceAccount: ""
  fetch: gpt-oss.modelFetch.oci
pvc:
  name: pvc
  copy: true
  settingKey: ""
  settingValue: ""
  endpoint: ""
  from: {{ printf "the copy already on the claim %s in %s" (include "gpt-oss.modelCache.claimName" .) (include "gpt-oss.modelPath" .) | quote }}
  check: {{ printf "the check Job refuses %s, checks every file's sha256 (nothing is fetched), then writes the ready marker" $pin | quote }}
  jobTask: check
  checker: marker
  serviceAccount: ""
  fetch: gpt-oss.modelFetch.pvc
{{- end }}

{{/*
The chosen source (modelCache.source): its record of gpt-oss.modelSources, and what follows from it for this
release (NOTES, the Job, the NetworkPolicy and every pod read it):
  source: its name; imageVolume: an OCI image mounted read-only in every pod (no PVC); pvc: the pods mount a claim;
  job: the download Job renders; disk: what each pod needs on disk; ports: the TCP ports the Job connects to,
  sorted (those of the source's endpoint, the proxies (modelCache.proxy.existingSecretPort for a proxy from a
  Secret) and the vocabulary URL, as gpt-oss.urlPort reads them).
Usage: {{ $source := index . (include "gpt-oss.object" (list "gpt-oss.modelSource" .)) }}
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
{{- $record := get (index . (include "gpt-oss.object" (list "gpt-oss.modelSources" .))) $mc.source }}
{{- $imageVolume := eq $record.checker "verify" }}
{{- $disk := list }}
{{- $weights := "the weights (~65 GB for openai/gpt-oss-120b without original/ and metal/)" }}
{{- if $imageVolume }}
{{- $disk = append $disk (printf "each node running a worker or the frontend holds the image, %s, in its container runtime's image store; no PVC" $weights) }}
{{- $disk = append $disk "pods need no other disk for the model: the image volume is read-only" }}
{{- else }}
{{- $size := ternary (printf "%s, %s, kept on uninstall" $mc.size $mc.accessMode) "an existing claim" (not $mc.existingClaim) }}
{{- $disk = append $disk (printf "PVC %s (%s) holds %s, shared by every pod; pods need no local disk for the model"
  (include "gpt-oss.modelCache.claimName" .) $size $weights) }}
{{- if and (eq $mc.source "oci") (not $imageVolume) }}
{{- $disk = append $disk "the download Job also keeps one image layer (the largest file) on that PVC while it unpacks it" }}
{{- end }}
{{- end }}
{{- $urls := list }}
{{- with $record.endpoint }}{{ $urls = append $urls . }}{{ end }}
{{- if .Values.model.tiktoken.stage }}{{ $urls = append $urls .Values.model.tiktoken.url }}{{ end }}
{{- with $mc.proxy.httpsProxy }}{{ $urls = append $urls . }}{{ end }}
{{- with $mc.proxy.httpProxy }}{{ $urls = append $urls . }}{{ end }}
{{- $ports := list }}
{{- range $urls }}
{{- $ports = append $ports (printf "%05d" (atoi (include "gpt-oss.urlPort" .))) }}
{{- end }}
{{- if $mc.proxy.existingSecret }}
{{- $ports = append $ports (printf "%05d" (int $mc.proxy.existingSecretPort)) }}
{{- end }}
{{- /* Zero-padded, so that the string sort is numeric. */}}
{{- $sorted := list }}
{{- range sortAlpha (uniq $ports) }}{{ $sorted = append $sorted (atoi .) }}{{ end }}
{{- toYaml $record }}
source: {{ $mc.source }}
imageVolume: {{ $imageVolume }}
pvc: {{ not $imageVolume }}
job: {{ and (ne $record.jobTask "") $mc.download.enabled }}
disk: {{ toYaml $disk | nindent 2 }}
ports: {{ toYaml $sorted | nindent 2 }}
{{- end }}
