{{- /* The model cache: its claim, paths, download Job name and the init container that waits for it. */}}

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
Marker file the download Job writes when the pinned revision is complete; workers wait for it.
Usage: {{ include "gpt-oss.modelMarker" . }}
*/}}
{{- define "gpt-oss.modelMarker" -}}
{{- printf "%s/.download-complete-%s" (include "gpt-oss.modelPath" .) .Values.model.revision }}
{{- end }}

{{/*
Directory on the model cache holding the staged harmony vocabulary (o200k_base.tiktoken).
Usage: {{ include "gpt-oss.tiktokenDir" . }}
*/}}
{{- define "gpt-oss.tiktokenDir" -}}
{{- printf "%s/tiktoken" (trimSuffix "/" .Values.modelCache.mountPath) }}
{{- end }}

{{/*
Name of the download Job, suffixed with a hash of what its pod runs and of its pod labels: a changed
image, version or revision, or a new chart version (helm.sh/chart), makes a new Job on upgrade instead of
patching an immutable pod template.
Usage: {{ include "gpt-oss.downloadJobName" . }}
*/}}
{{- define "gpt-oss.downloadJobName" -}}
{{- $inputs := dict "model" .Values.model "download" .Values.modelCache.download "mountPath" .Values.modelCache.mountPath "claim" (include "gpt-oss.modelCache.claimName" .) "labels" (include "gpt-oss.labels" (dict "root" . "component" "model-download")) }}
{{- printf "%s-model-download-%s" (include "gpt-oss.fullname" . | trunc 40 | trimSuffix "-") (toJson $inputs | sha256sum | trunc 8) }}
{{- end }}

{{/*
Init container that holds a pod until the download marker exists, saying what it waits for.
Usage: {{ include "gpt-oss.waitForModelContainer" . | nindent 8 }}
*/}}
{{- define "gpt-oss.waitForModelContainer" -}}
- name: wait-for-model
  image: {{ include "gpt-oss.image" .Values.waitForModel.image }}
  imagePullPolicy: {{ .Values.waitForModel.image.pullPolicy }}
  command:
    - sh
    - -c
    - |
      marker={{ include "gpt-oss.modelMarker" . }}
      until [ -f "$marker" ]; do
        echo "waiting for $marker: the model-cache download Job ({{ include "gpt-oss.downloadJobName" . }}) writes it when {{ .Values.model.id }}@{{ .Values.model.revision }} is complete"
        sleep 30
      done
      echo "model cache ready: $marker"
  securityContext: {{ include "gpt-oss.readOnlyContainerSecurityContext" . | nindent 4 }}
  resources:
    requests:
      cpu: 10m
      memory: 16Mi
    limits:
      memory: 32Mi
  volumeMounts:
    - name: model-cache
      mountPath: {{ .Values.modelCache.mountPath }}
      readOnly: true
{{- end }}
