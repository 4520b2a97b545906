{{- /* Model source rules (modelCache.source): what each source needs, and credentials given one way only. */}}

{{/*
Model sources (modelCache.source): what each source needs, credentials given one way only, the Kubernetes an
image volume needs, settings of a source that is not chosen, and keys removed in 0.3.0.
Usage: {{ include "gpt-oss.checkValues.modelSource" . }}
*/}}
{{- define "gpt-oss.checkValues.modelSource" -}}
{{- $mc := .Values.modelCache }}
{{- $source := $mc.source }}
{{- $dl := $mc.download }}

{{- /* Removed in 0.3.0: nothing is installed at start any more. */}}
{{- /* Rule: modelCache.download.huggingfaceHubVersion stays null (removed in 0.3.0). */}}
{{- if not (kindIs "invalid" $dl.huggingfaceHubVersion) }}
{{- fail (printf (print "modelCache.download.huggingfaceHubVersion=%v was removed in 0.3.0: the download Job installs nothing at "
  "start, its image (modelCache.download.image, built from images/model-fetch) carries huggingface_hub 1.33.0; remove the key, "
  "or opt in to an install from PyPI with modelCache.download.pipInstall=[\"huggingface_hub==%v\"]")
  $dl.huggingfaceHubVersion $dl.huggingfaceHubVersion) }}
{{- end }}
{{- /* Rule: modelCache.download.hfTransferVersion stays null (removed in 0.3.0). */}}
{{- if not (kindIs "invalid" $dl.hfTransferVersion) }}
{{- fail (printf (print "modelCache.download.hfTransferVersion=%v was removed in 0.3.0: huggingface_hub 1.x (the download "
  "image's) no longer uses hf_transfer; remove the key, and use modelCache.download.transfer=xet for fast downloads")
  $dl.hfTransferVersion) }}
{{- end }}
{{- /* Rule: no transfer=hf_transfer (removed in 0.3.0). */}}
{{- if eq $dl.transfer "hf_transfer" }}
{{- fail (print "modelCache.download.transfer=hf_transfer was removed in 0.3.0: huggingface_hub 1.x (the download image's) no "
  "longer uses hf_transfer; allowed: default, or xet (HF_XET_HIGH_PERFORMANCE=1, up to ~64 GB RAM)") }}
{{- end }}

{{- /* Settings of a source that is not chosen would be ignored, silently: say so instead. */}}
{{- $records := index . (include "gpt-oss.object" (list "gpt-oss.modelSources" .)) }}
{{- range $name, $record := $records }}
{{- /* Rule: no setting of a source that is not chosen. */}}
{{- if and $record.settingValue (ne $source $name) }}
{{- fail (printf "%s=%s is set, but modelCache.source=%s, so it would be ignored; set modelCache.source=%s, or empty %s"
  $record.settingKey $record.settingValue $source $name $record.settingKey) }}
{{- end }}
{{- end }}
{{- $copy := (get $records $source).copy }}

{{- /* Rule: a copy (s3, oci, pvc) is pinned by its manifest's sha256, as the Hub's is by the revision. */}}
{{- if and $copy (not $mc.manifestSha256) }}
{{- fail (printf (print "modelCache.source=%s needs modelCache.manifestSha256: the sha256 of the copy's model-manifest.json, "
  "which tools/mirror-model.py prints when it writes the copy; without it any copy of model.revision would be served") $source) }}
{{- end }}
{{- /* A mirror serves the listing and the bytes: only a pin made elsewhere checks them (docs/security.md). */}}
{{- if and (eq $source "huggingface") $mc.huggingface.endpoint }}
{{- /* Rule: a Hub mirror is https://. */}}
{{- if not (hasPrefix "https://" $mc.huggingface.endpoint) }}
{{- fail (printf (print "modelCache.huggingface.endpoint=%s is not https://: over plain HTTP anyone on the network can change the "
  "files and their hashes alike, and read the token; use the mirror's https:// URL (with modelCache.caBundle for a private CA)")
  $mc.huggingface.endpoint) }}
{{- end }}
{{- /* Rule: a Hub mirror needs modelCache.manifestSha256. */}}
{{- if not $mc.manifestSha256 }}
{{- fail (printf (print "modelCache.huggingface.endpoint=%s needs modelCache.manifestSha256: a mirror lists the sizes and hashes "
  "of the very bytes it serves, so without a pin made elsewhere nothing checks it; run tools/mirror-model.py --endpoint %s (or "
  "against https://huggingface.co) and pin the manifest sha256 it prints") $mc.huggingface.endpoint $mc.huggingface.endpoint) }}
{{- end }}
{{- end }}
{{- /* Rule: a copy needs the download Job (it fills or checks the cache), unless an image volume serves it. */}}
{{- $imageVolume := eq (get $records $source).checker "verify" }}
{{- if and $copy (not $dl.enabled) (not $imageVolume) }}
{{- fail (printf (print "modelCache.download.enabled=false with modelCache.source=%s: the download Job is what %s the cache and "
  "writes the ready marker the pods wait for; keep modelCache.download.enabled=true")
  $source (ternary "checks" "fills and checks" (eq $source "pvc"))) }}
{{- end }}

{{- if eq $source "s3" }}
{{- /* Rule: source s3 names its bucket. */}}
{{- if not $mc.s3.bucket }}
{{- fail (print "modelCache.source=s3 needs modelCache.s3.bucket (and modelCache.s3.prefix, the folder where "
  "tools/mirror-model.py wrote model-manifest.json)") }}
{{- end }}
{{- $sa := $mc.s3.serviceAccount }}
{{- /* Rule: S3 credentials one way only: a Secret or a workload identity. */}}
{{- if and $mc.s3.credentialsSecret.name (or $sa.create $sa.name) }}
{{- fail (printf (print "S3 credentials are given two ways: modelCache.s3.credentialsSecret.name=%s and a workload identity "
  "(modelCache.s3.serviceAccount.create=%v, name=%q); keep one: empty modelCache.s3.credentialsSecret.name, or set "
  "modelCache.s3.serviceAccount.create=false and name=\"\"") $mc.s3.credentialsSecret.name $sa.create $sa.name) }}
{{- end }}
{{- /* Rule: ServiceAccount annotations only on a ServiceAccount the chart creates. */}}
{{- if and $sa.annotations (not $sa.create) }}
{{- fail (print "modelCache.s3.serviceAccount.annotations are set, but modelCache.s3.serviceAccount.create=false: the chart "
  "annotates only a ServiceAccount it creates; set modelCache.s3.serviceAccount.create=true, or annotate your own ServiceAccount "
  "and name it in modelCache.s3.serviceAccount.name") }}
{{- end }}
{{- end }}

{{- if eq $source "oci" }}
{{- /* Rule: source oci names its image by repository and digest. */}}
{{- if not (and $mc.oci.repository $mc.oci.digest) }}
{{- fail (printf (print "modelCache.source=oci needs modelCache.oci.repository and modelCache.oci.digest (repository=%q, "
  "digest=%q): the image is pulled by the digest tools/mirror-model.py printed, never by a tag") $mc.oci.repository $mc.oci.digest) }}
{{- end }}
{{- if eq $mc.oci.mount "imageVolume" }}
{{- /* Rule: image volumes need Kubernetes 1.35 or newer. */}}
{{- if semverCompare "<1.35.0-0" .Capabilities.KubeVersion.Version }}
{{- fail (printf (print "modelCache.oci.mount=imageVolume needs Kubernetes 1.35 or newer (image volumes are beta and on by "
  "default from 1.35), but the cluster is %s; set modelCache.oci.mount=pull, and the download Job copies the image into the "
  "cache PVC") .Capabilities.KubeVersion.Version) }}
{{- end }}
{{- /* Rule: an image volume uses no PVC, so no existingClaim. */}}
{{- if $mc.existingClaim }}
{{- fail (printf (print "modelCache.existingClaim=%s is set, but modelCache.oci.mount=imageVolume uses no PVC (every pod mounts "
  "the image); empty modelCache.existingClaim, or set modelCache.oci.mount=pull to copy the image into that claim")
  $mc.existingClaim) }}
{{- end }}
{{- end }}
{{- end }}

{{- /* Rule: source pvc names the claim that holds the copy. */}}
{{- if and (eq $source "pvc") (not $mc.existingClaim) }}
{{- fail (printf (print "modelCache.source=pvc needs modelCache.existingClaim: the claim that holds the copy in %s/ (the folder "
  "tools/mirror-model.py wrote, with model-manifest.json)") .Values.model.id) }}
{{- end }}

{{- /* Rule: the CA bundle comes from a ConfigMap or a Secret, not both. */}}
{{- if and $mc.caBundle.configMap $mc.caBundle.secret }}
{{- fail (printf (print "modelCache.caBundle.configMap=%s and modelCache.caBundle.secret=%s are both set: the CA bundle comes "
  "from one of them; empty the other") $mc.caBundle.configMap $mc.caBundle.secret) }}
{{- end }}
{{- end }}
