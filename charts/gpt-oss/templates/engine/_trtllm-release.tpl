{{/*
The TensorRT-LLM release that reads the engine YAML. runtime dynamo: the one inside the line's runtime image
(DYNAMO-RELEASES-FACTS.md section 0: Dynamo 1.2.x pins 1.3.0rc14, 1.6.x 1.3.0rc29); runtime trtllm-serve: the
release of trtllmServe.image.tag (gpt-oss.trtllmServe.release), "" for a digest or a custom tag.
Usage: {{ include "gpt-oss.trtllmRelease" . }}
*/}}
{{- define "gpt-oss.trtllmRelease" -}}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $release := include "gpt-oss.trtllmServe.release" . | fromYaml }}
{{- if $release.version }}{{ printf "%s%s" $release.version $release.prerelease }}{{ end }}
{{- else }}
{{- get (dict "1.2" "1.3.0rc14" "1.6" "1.3.0rc29") (include "gpt-oss.dynamoLine" .) }}
{{- end }}
{{- end }}

{{/*
The engine keys of one TensorRT-LLM release (_trtllm-fields.tpl): release, source (where its list was read),
top (TorchLlmArgs fields) and nested (engine key -> keys of its config). A release the chart has no list for
("" included) gets the shared list, and its source says so.
Usage: {{ $fields := include "gpt-oss.trtllmFieldsOf" "1.3.0rc29" | fromYaml }}
*/}}
{{- define "gpt-oss.trtllmFieldsOf" -}}
{{- $lists := include "gpt-oss.trtllmFieldLists" . | fromYaml }}
{{- $entry := get $lists.releases . | default (dict "list" "shared" "source" (printf
  "no list for TensorRT-LLM %s: the shared trtllm/llmargs-fields.json" (. | default "of an unversioned image"))) }}
{{- $list := get $lists.lists $entry.list }}
release: {{ . | default "unknown" | quote }}
source: {{ $entry.source | quote }}
top: {{ toYaml $list.top | nindent 2 }}
nested: {{ toYaml $list.nested | nindent 2 }}
{{- end }}

{{/*
The engine keys of the TensorRT-LLM release this render runs (gpt-oss.trtllmRelease).
Usage: {{ $fields := include "gpt-oss.trtllmFields" . | fromYaml }}
*/}}
{{- define "gpt-oss.trtllmFields" -}}
{{- include "gpt-oss.trtllmFieldsOf" (include "gpt-oss.trtllmRelease" .) }}
{{- end }}

{{/*
TensorRT-LLM 1.3.0 release candidates the chart takes to serve the queue and KV-cache gauges of
tensorrt_llm/metrics/collector.py (trtllm_num_requests_waiting, trtllm_num_requests_running,
trtllm_kv_cache_utilization): 1.3.0rc29, the release inside Dynamo 1.6's runtime and trtllm-serve's default,
published 2026-09-29, six months after the PRs that added them (#11243 2026-02-03, #12545 2026-03-25) were merged on
main (docs/monitoring.md: inferred, its wheel is not on PyPI). Other candidates stay "unknown" (let through).
Usage: {{ $candidates := include "gpt-oss.trtllmGaugeCandidates" . | fromYamlArray }}
*/}}
{{- define "gpt-oss.trtllmGaugeCandidates" -}}
- 1.3.0rc29
{{- end }}
