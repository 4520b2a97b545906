{{- /* Which TensorRT-LLM release reads the engine YAML, and which key list (_trtllm-fields.tpl) checks it. */}}

{{/*
The TensorRT-LLM release inside the tensorrtllm-runtime image of each Dynamo minor (DYNAMO-RELEASES-FACTS.md
section 0; 1.6.1 and 1.6.2 keep 1.6.0's, and 1.7.0 moves to 1.4.0rc2: dynamo/RELEASE-1.7-FACTS.md section 1): a
release line's own, and those of the stepping-stone runtimes of the one-minor-at-a-time upgrade path.
Usage: {{ $pins := include "gpt-oss.dynamoTrtllmPins" . | fromYaml }}
*/}}
{{- define "gpt-oss.dynamoTrtllmPins" -}}
"1.2": 1.3.0rc14
"1.3": 1.3.0rc19
"1.4": 1.3.0rc22
"1.5": 1.3.0rc25
"1.6": 1.3.0rc29
"1.7": 1.4.0rc2
{{- end }}

{{/*
The TensorRT-LLM release that reads the engine YAML. runtime dynamo: the one inside the line's runtime image
(gpt-oss.dynamoTrtllmPins: the 1.2 line 1.3.0rc14, the 1.6 line 1.3.0rc29, the 1.7 line 1.4.0rc2); runtime
trtllm-serve: the
release of trtllmServe.image.tag (gpt-oss.trtllmServe.release), "" for a digest or a custom tag.
Usage: {{ include "gpt-oss.trtllmRelease" . }}
*/}}
{{- define "gpt-oss.trtllmRelease" -}}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $release := include "gpt-oss.trtllmServe.release" . | fromYaml }}
{{- if $release.version }}{{ printf "%s%s" $release.version $release.prerelease }}{{ end }}
{{- else }}
{{- get (include "gpt-oss.dynamoTrtllmPins" . | fromYaml) (include "gpt-oss.dynamoLine" .) }}
{{- end }}
{{- end }}

{{/*
The key list that checks the engine YAML (gpt-oss.engineKeyList), computed once per render.
  release: the TensorRT-LLM release that reads it ("" when trtllmServe.image.tag names none)
  list: that release, or "shared" when the chart has no list of it; listed: whether it has one
  name, reader: the list and who reads the YAML, in a user's words (the refusals name both)
  runs, runsFrom: under Dynamo, the release inside the runtime image actually rendered, and the value that chose
    that runtime (a stepping-stone runtime of the upgrade path runs a release of its own)
  summary: the sentence NOTES.txt and the plan print
Usage: {{ $list := index . (include "gpt-oss.object" (list "gpt-oss.engineKeyList" .)) }}
*/}}
{{- define "gpt-oss.engineKeyList" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeEngineKeyList" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.engineKeyList, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeEngineKeyList" . }} (templates read it through gpt-oss.engineKeyList)
*/}}
{{- define "gpt-oss.computeEngineKeyList" -}}
{{- $index := include "gpt-oss.trtllmKeyLists" . | fromJson }}
{{- $release := include "gpt-oss.trtllmRelease" . }}
{{- $listed := hasKey $index.releases $release }}
{{- $runs := $release }}
{{- $runsFrom := "" }}
{{- $reader := "" }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $tag := toString .Values.trtllmServe.image.tag }}
{{- $reader = ternary (printf "the release of trtllmServe.image.tag=%s" $tag)
  (printf "trtllmServe.image.tag=%s names no TensorRT-LLM release" $tag) (ne $release "") }}
{{- else }}
{{- $reader = printf "the release inside the Dynamo %s line's runtime" (include "gpt-oss.dynamoLine" .) }}
{{- $runtime := index . (include "gpt-oss.object" (list "gpt-oss.dynamoRuntimeVersion" .)) }}
{{- $minor := regexFind `^[0-9]+\.[0-9]+` (toString $runtime.version) }}
{{- $pins := include "gpt-oss.dynamoTrtllmPins" . | fromYaml }}
{{- $runs = get $pins $minor }}
{{- $runsFrom = printf "%s=%s" $runtime.source (ternary $runtime.imageTag (toString .Values.dynamo.runtimeVersionOverride)
  (eq $runtime.source "dynamo.image.tag")) }}
{{- end }}
release: {{ $release | quote }}
list: {{ ternary $release "shared" $listed | quote }}
listed: {{ $listed }}
name: {{ ternary (printf "TensorRT-LLM %s" $release) "the shared key list" $listed | quote }}
reader: {{ $reader | quote }}
runs: {{ $runs | quote }}
runsFrom: {{ $runsFrom | quote }}
{{- if $listed }}
summary: {{ printf "checked against the engine keys of TensorRT-LLM %s, %s (its list %s)" $release $reader
  (get $index.releases $release).words | quote }}
{{- else }}
summary: {{ printf "checked against %s, since %s (trtllmServe.allowUnlistedRelease=true)" $index.shared.words
  (ternary (printf "TensorRT-LLM %s, %s, has no list of its own" $release $reader) $reader (ne $release "")) | quote }}
{{- end }}
{{- end }}

{{/*
What the other releases say about a name the checking list lacks, as "; <sentence>", or "" (the shared list, or
nothing known). path: "key", "key.subkey" or "key.field=value"; a value falls back to "key=" (since when the key
takes only some values).
Usage: {{ include "gpt-oss.engineKeyHistory" (dict "list" $list "path" "sampler_type") }}
*/}}
{{- define "gpt-oss.engineKeyHistory" -}}
{{- if .list.listed }}
{{- $history := include (printf "gpt-oss.trtllmKeyHistory.%s" .list.list) . | fromJson }}
{{- $said := get $history .path | default (get $history (regexReplaceAll "=.*$" .path "=")) }}
{{- with $said }}; {{ . }}{{ end }}
{{- end }}
{{- end }}

{{/*
Warnings about the list that checked the engine YAML: a trtllm-serve release with no list of its own (checked
against the shared one, trtllmServe.allowUnlistedRelease), or a Dynamo runtime whose TensorRT-LLM differs from its
line's and has no list (checked against the line's). A YAML list of sentences.
Usage: {{ $warnings := include "gpt-oss.engineKeyWarnings" . | fromYamlArray }}
*/}}
{{- define "gpt-oss.engineKeyWarnings" -}}
{{- $list := index . (include "gpt-oss.object" (list "gpt-oss.engineKeyList" .)) }}
{{- $index := include "gpt-oss.trtllmKeyLists" . | fromJson }}
{{- $warnings := list }}
{{- if not $list.listed }}
{{- $warnings = append $warnings (printf (print "trtllmServe.engine was %s: a key that release dropped or renamed passes "
  "here and stops the server at start, and one it added is refused") $list.summary) }}
{{- else if and $list.runs (ne $list.runs $list.release) (not (hasKey $index.releases $list.runs)) }}
{{- $warnings = append $warnings (printf (print "%s runs TensorRT-LLM %s, which the chart has no engine key list for: the "
  "engine YAML was checked against the list of %s, %s, so a key %s added or dropped since shows only when the workers start")
  $list.runsFrom $list.runs $list.release $list.reader $list.runs) }}
{{- end }}
{{- toYaml $warnings }}
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
