{{- /* What the download Job needs from each model source: one define per source, yielding its env, volumeMounts and
volumes together as YAML text (comments and quoting kept), so the Job chooses the source once. */}}

{{/*
The download Job's part of source huggingface: the Hub (or a mirror) and the optional token, as a file.
The Hub's token goes to the Hub; to a mirror only when the user says so (sendTokenToMirror).
Usage: {{ $fetch := include "gpt-oss.modelFetch.huggingface" . | fromYaml }}
*/}}
{{- define "gpt-oss.modelFetch.huggingface" -}}
{{- $mc := .Values.modelCache }}
{{- $download := $mc.download }}
{{- $token := .Values.huggingface.tokenSecret }}
{{- $hfToken := and $token.name (or (not $mc.huggingface.endpoint) $mc.huggingface.sendTokenToMirror) }}
env: |-
  - name: IGNORE_PATTERNS
    value: {{ toJson $download.ignorePatterns | quote }}
  - name: HF_HOME
    value: /tmp/hf-home
  {{- with $mc.huggingface.endpoint }}
  - name: HF_ENDPOINT
    value: {{ . | quote }}
  {{- end }}
  {{- if eq $download.transfer "xet" }}
  - name: HF_XET_HIGH_PERFORMANCE
    value: "1"
  {{- end }}
  {{- if $hfToken }}
  # The optional token as a file, never in the environment.
  - name: HF_TOKEN_PATH
    value: /var/run/secrets/huggingface/token
  {{- end }}
volumeMounts: |-
  {{- if $hfToken }}
  - name: hf-token
    mountPath: /var/run/secrets/huggingface
    readOnly: true
  {{- end }}
volumes: |-
  {{- if $hfToken }}
  - name: hf-token
    secret:
      secretName: {{ $token.name | quote }}
      # The model is not gated: no Secret is fine.
      optional: true
      items:
        - key: {{ $token.key | quote }}
          path: token
  {{- end }}
{{- end }}

{{/*
The download Job's part of source s3: the bucket and prefix of the copy, and the keys as files when a Secret
holds them (a workload identity needs nothing here: the source's serviceAccount, gpt-oss.modelSources).
Usage: {{ $fetch := include "gpt-oss.modelFetch.s3" . | fromYaml }}
*/}}
{{- define "gpt-oss.modelFetch.s3" -}}
{{- $s3 := .Values.modelCache.s3 }}
{{- $keys := $s3.credentialsSecret }}
env: |-
  {{- with $s3.endpoint }}
  - name: S3_ENDPOINT
    value: {{ . | quote }}
  {{- end }}
  - name: S3_BUCKET
    value: {{ $s3.bucket | quote }}
  {{- with trimAll "/" $s3.prefix }}
  - name: S3_PREFIX
    value: {{ . | quote }}
  {{- end }}
  {{- with $s3.region }}
  - name: S3_REGION
    value: {{ . | quote }}
  {{- end }}
  - name: S3_PATH_STYLE
    value: {{ $s3.pathStyle | toString | quote }}
  {{- if $keys.name }}
  # The keys as files, never in the environment.
  - name: S3_CREDENTIALS_DIR
    value: /var/run/secrets/s3
  {{- end }}
volumeMounts: |-
  {{- if $keys.name }}
  - name: s3-credentials
    mountPath: /var/run/secrets/s3
    readOnly: true
  {{- end }}
volumes: |-
  {{- if $keys.name }}
  - name: s3-credentials
    secret:
      secretName: {{ $keys.name | quote }}
      items:
        - key: {{ $keys.accessKeyIdKey | quote }}
          path: access-key-id
        - key: {{ $keys.secretAccessKeyKey | quote }}
          path: secret-access-key
        {{- with $keys.sessionTokenKey }}
        - key: {{ . | quote }}
          path: session-token
        {{- end }}
  {{- end }}
{{- end }}

{{/*
The download Job's part of source oci (mount pull; an image volume needs no Job): the image by digest, and the
dynamo.imagePullSecrets' .dockerconfigjson files as the registry's credentials.
Usage: {{ $fetch := include "gpt-oss.modelFetch.oci" . | fromYaml }}
*/}}
{{- define "gpt-oss.modelFetch.oci" -}}
{{- $oci := .Values.modelCache.oci }}
env: |-
  - name: OCI_REPOSITORY
    value: {{ $oci.repository | quote }}
  - name: OCI_DIGEST
    value: {{ $oci.digest | quote }}
  - name: OCI_PLAIN_HTTP
    value: {{ $oci.plainHttp | toString | quote }}
  {{- with $oci.tokenService }}
  - name: OCI_TOKEN_SERVICE
    value: {{ . | quote }}
  {{- end }}
  {{- with .Values.dynamo.imagePullSecrets }}
  - name: REGISTRY_AUTH_FILES
    value: {{ include "gpt-oss.registryAuthFiles" $ | quote }}
  {{- end }}
volumeMounts: |-
  {{- range $i, $secret := .Values.dynamo.imagePullSecrets }}
  - name: {{ printf "registry-auth-%d" $i }}
    mountPath: {{ printf "/var/run/secrets/registry/%d" $i }}
    readOnly: true
  {{- end }}
volumes: |-
  {{- range $i, $secret := .Values.dynamo.imagePullSecrets }}
  - name: {{ printf "registry-auth-%d" $i }}
    secret:
      secretName: {{ $secret.name | quote }}
      items:
        - key: .dockerconfigjson
          path: config.json
  {{- end }}
{{- end }}

{{/*
The download Job's part of source pvc: the claim whose copy it checks (nothing is fetched).
Usage: {{ $fetch := include "gpt-oss.modelFetch.pvc" . | fromYaml }}
*/}}
{{- define "gpt-oss.modelFetch.pvc" -}}
env: |-
  - name: CLAIM_NAME
    value: {{ include "gpt-oss.modelCache.claimName" . | quote }}
volumeMounts: ""
volumes: ""
{{- end }}
