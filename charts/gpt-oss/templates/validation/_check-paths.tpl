{{- /* Path rules: the model the revision belongs to, and mounts that stay in their folders. */}}

{{/*
Paths: model.id and model.revision from the chart's table (gpt-oss.knownModels), a cache mount clear of the folders
the chart and the system use, and a benchmark folder clear of the read-only model folder. The schema has already
refused . and .. folders.
Usage: {{ include "gpt-oss.checkValues.paths" . }}
*/}}
{{- define "gpt-oss.checkValues.paths" -}}
{{- $known := include "gpt-oss.knownModels" . | fromYaml }}
{{- $model := .Values.model }}
{{- /* Rule: model.id is a model the chart knows. */}}
{{- if not (hasKey $known $model.id) }}
{{- fail (printf (print "model.id=%s is not a model this chart knows: its sizes, engine settings, download checks and pinned "
  "revisions are those of the models in gpt-oss.knownModels (templates/model-cache/_model-cache.tpl); allowed: %s")
  $model.id (join ", " (keys $known | sortAlpha))) }}
{{- end }}
{{- $revisions := get $known $model.id }}
{{- /* Rule: model.revision is a revision of model.id. */}}
{{- if not (has $model.revision $revisions) }}
{{- fail (printf (print "model.revision=%s is not a revision of %s the chart knows, so the download would fetch another "
  "model's files under this model's name, or files nobody checked; allowed: %s (a new revision goes into "
  "gpt-oss.knownModels)") $model.revision $model.id (join ", " $revisions)) }}
{{- end }}
{{- $mount := trimSuffix "/" .Values.modelCache.mountPath }}
{{- $taken := list }}
{{- /* The chart's own mounts: the cache may sit inside one (its folder is made there), never at one or above it. */}}
{{- range list "/tmp" "/dev/shm" "/engine" "/artifacts" "/config" "/opt/gpt-oss/scripts" "/etc/gpt-oss/ca" "/var/run/secrets/huggingface"
  "/var/run/secrets/s3" "/var/run/secrets/registry" "/var/run/secrets/kubernetes.io/serviceaccount" }}
{{- if or (eq $mount .) (hasPrefix (printf "%s/" $mount) .) }}{{ $taken = append $taken . }}{{ end }}
{{- end }}
{{- /* The system's folders: neither at, in nor above them. */}}
{{- range list "/dev" "/proc" "/sys" "/etc" "/usr" "/bin" "/sbin" "/lib" "/lib64" }}
{{- if or (eq $mount .) (hasPrefix (printf "%s/" .) $mount) (hasPrefix (printf "%s/" $mount) .) }}{{ $taken = append $taken . }}{{ end }}
{{- end }}
{{- /* Rule: the cache mount is clear of the folders the chart mounts and the system's. */}}
{{- if $taken }}
{{- fail (printf (print "modelCache.mountPath=%s is at or above %s, which the chart's containers mount themselves (scratch "
  "space, scripts, engine files, secrets, the benchmark's artifacts) or the system needs, so the kubelet would mount one over "
  "the other or make folders in the cache; allowed: a folder of its own, e.g. /model-cache (the default)")
  .Values.modelCache.mountPath (join ", " ($taken | uniq))) }}
{{- end }}
{{- $artifacts := trimSuffix "/" .Values.benchmark.artifactsDir }}
{{- /* Rule: the benchmark's writable folder is neither the model's folder, nor in it, nor above it. */}}
{{- if and .Values.benchmark.enabled (or (eq $artifacts $model.id) (hasPrefix (printf "%s/" $artifacts) $model.id)
  (hasPrefix (printf "%s/" $model.id) $artifacts)) }}
{{- fail (printf (print "benchmark.artifactsDir=%s overlaps the model's folder %s on the cache (%s/%s): the benchmark mounts "
  "its folder writable, so it could change the weights and the ready marker every worker trusts; allowed: a folder beside "
  "it, e.g. perf (the default)") .Values.benchmark.artifactsDir $model.id $mount $model.id) }}
{{- end }}
{{- end }}
