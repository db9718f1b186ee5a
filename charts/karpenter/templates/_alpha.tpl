{{/*
The alpha Linode provider's chart named some values differently. Each of them is read under its
new name here, or the render fails with a message naming what replaces it: none is ignored.
A value an alpha values file carries at that chart's default, for a setting that no longer
exists, asks for nothing and is accepted. docs/migrating.md has the table.
*/}}

{{/* The default of the alpha chart's values that have no equivalent here. */}}
{{- define "karpenter.alpha.noEquivalent" -}}
settings.lkeCreateDeadline: {default: 10s, why: "the LKE launch waits for the pool's Linode on its own, bounded schedule"}
settings.lkeTagVerificationTimeout: {default: 4s, why: "pools are found by their tags, with no verification step to time"}
settings.lkeRetryDelay: {default: 2s, why: "launch retries follow Karpenter core's backoff"}
settings.clusterCABundle: {default: "", why: "LKE gives its nodes the cluster's CA, and this release takes no CA bundle setting"}
webhook.metrics.port: {default: 8001, why: "the webhook server's metrics are served with the controller's, on controller.metrics.port"}
logOutputPaths: {default: [stdout], why: "the controller logs to stdout"}
logErrorOutputPaths: {default: [stderr], why: "the controller logs errors to stderr"}
controller.sidecarContainer: {default: [], why: "the chart runs the controller container alone"}
controller.sidecarVolumeMounts: {default: [], why: "the chart runs the controller container alone"}
{{- end }}

{{/* Looks up a dotted path such as settings.lkeRetryDelay in the values: a list of [found, value]. */}}
{{- define "karpenter.alpha.lookup" -}}
{{- $node := .values }}
{{- $found := true }}
{{- range $key := splitList "." .path }}
{{- if and $found (kindIs "map" $node) (hasKey $node $key) }}
{{- $node = get $node $key }}
{{- else }}
{{- $found = false }}
{{- end }}
{{- end }}
{{- toJson (list $found $node) }}
{{- end }}

{{- define "karpenter.alpha.validate" -}}
{{- $values := .Values }}
{{- $ref := $values.credentialsSecretRef }}
{{- if and $ref $values.existingSecret }}
{{- fail "credentialsSecretRef and existingSecret are both set: keep one (existingSecret replaces credentialsSecretRef, the alpha chart's name for a Secret with LINODE_TOKEN, LINODE_URL and LINODE_API_VERSION)" }}
{{- end }}
{{- if and $ref $values.apiToken }}
{{- fail "apiToken is not used with credentialsSecretRef: the token comes from the Secret's LINODE_TOKEN, as with the alpha chart; remove apiToken" }}
{{- end }}
{{- if $ref }}
{{- if or (ne $values.settings.apiURL "https://api.linode.com") (and (hasKey $values "apiURL") (ne $values.apiURL "https://api.linode.com")) }}
{{- fail (printf "apiURL (settings.apiURL) is not used with credentialsSecretRef: as with the alpha chart, the controller takes LINODE_URL from Secret %s; put it there, or use existingSecret and settings.apiURL" $ref) }}
{{- end }}
{{- if or (ne $values.settings.apiVersion "v4") (and (hasKey $values "apiVersion") (not (has $values.apiVersion (list "v4" "v4beta")))) }}
{{- fail (printf "apiVersion (settings.apiVersion) is not used with credentialsSecretRef: as with the alpha chart, the controller takes LINODE_API_VERSION from Secret %s; put it there, or use existingSecret and settings.apiVersion" $ref) }}
{{- end }}
{{- else }}
{{- if and (hasKey $values "apiURL") (ne $values.settings.apiURL "https://api.linode.com") (ne $values.apiURL $values.settings.apiURL) }}
{{- fail "apiURL and settings.apiURL disagree: keep settings.apiURL, which replaces the alpha chart's apiURL" }}
{{- end }}
{{- if and (hasKey $values "apiVersion") (ne $values.settings.apiVersion "v4") (ne $values.apiVersion $values.settings.apiVersion) }}
{{- fail "apiVersion and settings.apiVersion disagree: keep settings.apiVersion, which replaces the alpha chart's apiVersion" }}
{{- end }}
{{- end }}
{{- if and (hasKey $values.settings "vmMemoryOverheadPercent") (ne (toString $values.settings.hypervisorMemoryPercent) "2.5") }}
{{- fail "settings.vmMemoryOverheadPercent and settings.hypervisorMemoryPercent are both set: keep settings.hypervisorMemoryPercent, its replacement, as a percentage (0.075 there is 7.5 here)" }}
{{- end }}
{{- $alphaImage := include "karpenter.alpha.image" . | fromJson }}
{{- $alphaRepository := include "karpenter.alpha.imageRepository" . }}
{{- if and (not (hasKey $alphaImage "repository")) (regexMatch "^v?0\\.1\\.[0-9]+$" (toString $alphaImage.tag)) }}
{{- fail (printf "controller.image.tag %s is a release of the alpha provider (%s), whose binary this chart cannot run: remove controller.image.tag, and the chart runs its own version" $alphaImage.tag $alphaRepository) }}
{{- end }}
{{- range $key, $default := dict "repository" "ghcr.io/linode/karpenter-provider-linode" "tag" "" "digest" "" }}
{{- $ours := toString (get $values.image $key) }}
{{- if and (hasKey $alphaImage $key) (ne $ours $default) (ne $ours (toString (get $alphaImage $key))) }}
{{- fail (printf "controller.image.%s and image.%s disagree: keep image.%s, which replaces the alpha chart's controller.image.%s" $key $key $key $key) }}
{{- end }}
{{- end }}
{{- if $values.linodeDebug }}
{{- fail "linodeDebug is not supported: linodego's debug output includes the API token; logLevel: debug logs the Linode client's retries and errors without it" }}
{{- end }}
{{- with ($values.podDisruptionBudget).name }}
{{- if ne . (include "karpenter.fullname" $) }}
{{- fail (printf "podDisruptionBudget.name has no equivalent: the PodDisruptionBudget is named after the release (%s); remove it" (include "karpenter.fullname" $)) }}
{{- end }}
{{- end }}
{{- range $path, $setting := include "karpenter.alpha.noEquivalent" . | fromYaml }}
{{- $lookup := include "karpenter.alpha.lookup" (dict "values" $values "path" $path) | fromJsonArray }}
{{- if and (index $lookup 0) (ne (toJson (index $lookup 1)) (toJson $setting.default)) }}
{{- fail (printf "%s of the alpha chart has no equivalent: %s; remove it" $path $setting.why) }}
{{- end }}
{{- end }}
{{- end }}

{{/* LINODE_URL and LINODE_API_VERSION, from the alpha chart's top-level apiURL and apiVersion when given. */}}
{{- define "karpenter.apiURL" -}}
{{- if hasKey .Values "apiURL" }}{{ .Values.apiURL }}{{ else }}{{ .Values.settings.apiURL }}{{ end }}
{{- end }}

{{- define "karpenter.apiVersion" -}}
{{- if hasKey .Values "apiVersion" }}{{ .Values.apiVersion }}{{ else }}{{ .Values.settings.apiVersion }}{{ end }}
{{- end }}

{{/* The alpha chart's default controller image repository, whose releases are the alpha provider's binary. */}}
{{- define "karpenter.alpha.imageRepository" -}}
docker.io/linode/karpenter-provider-linode
{{- end }}

{{/* The alpha chart's controller.image, without what its values file carries at that chart's
defaults (its repository, tag latest, no digest): those ask for no image in particular, so an alpha
values file kept as it is runs this chart's image. */}}
{{- define "karpenter.alpha.image" -}}
{{- $image := dict }}
{{- range $key, $value := (.Values.controller).image | default dict }}
{{- $atDefault := or (not $value) (and (eq $key "repository") (eq $value (include "karpenter.alpha.imageRepository" $))) (and (eq $key "tag") (eq $value "latest")) }}
{{- if not $atDefault }}{{ $_ := set $image $key $value }}{{ end }}
{{- end }}
{{- toJson $image }}
{{- end }}
