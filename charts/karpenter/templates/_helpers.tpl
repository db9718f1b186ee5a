{{/* The chart's name. */}}
{{- define "karpenter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name of the release's objects; the release name alone when it already contains the chart's name. */}}
{{- define "karpenter.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "karpenter.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "karpenter.labels" -}}
helm.sh/chart: {{ include "karpenter.chart" . }}
{{ include "karpenter.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.additionalLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Labels that select the controller pods: `kubectl get pods -l app.kubernetes.io/name=karpenter`. */}}
{{- define "karpenter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "karpenter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Metadata annotations of every object. */}}
{{- define "karpenter.annotations" -}}
{{- with .Values.additionalAnnotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The controller's ServiceAccount: the chart's, or the one serviceAccount.name names
(validateValues refuses serviceAccount.create=false without a name, which would bind every role to
the namespace's default ServiceAccount). */}}
{{- define "karpenter.serviceAccountName" -}}
{{- default (include "karpenter.fullname" .) .Values.serviceAccount.name }}
{{- end }}

{{/* The Secret holding the Linode token: the user's own (existingSecret, or the alpha chart's
credentialsSecretRef), or the one this chart creates from apiToken. */}}
{{- define "karpenter.tokenSecretName" -}}
{{- .Values.existingSecret | default .Values.credentialsSecretRef | default (include "karpenter.fullname" .) }}
{{- end }}

{{- define "karpenter.tokenSecretKey" -}}
{{- if .Values.existingSecret }}{{ .Values.existingSecretKey }}{{ else }}LINODE_TOKEN{{ end }}
{{- end }}

{{/* "true" when the Node webhook runs: it gives LKE's nodes the taints LKE cannot register them
with, and instance mode's kubelets register with them already. */}}
{{- define "karpenter.nodeWebhook" -}}
{{- and .Values.webhook.enabled (eq .Values.settings.mode "lke") }}
{{- end }}

{{/* Where the token's Secret is mounted; the controller reads LINODE_TOKEN_FILE there. */}}
{{- define "karpenter.tokenMountPath" -}}
/var/run/secrets/karpenter.k8s.linode
{{- end }}

{{/* Whether the token comes from a Secret the user manages. */}}
{{- define "karpenter.userSecret" -}}
{{- if or .Values.existingSecret .Values.credentialsSecretRef }}true{{ end }}
{{- end }}

{{/* The webhook's Service, also the name in its serving certificate. */}}
{{- define "karpenter.webhookServiceName" -}}
{{- printf "%s-webhook" (include "karpenter.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The Secret the controller keeps the webhook's serving certificate in. */}}
{{- define "karpenter.webhookCertSecretName" -}}
{{- printf "%s-cert" (include "karpenter.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The Secret the controller keeps the key of instance mode's bootstrap tokens in. */}}
{{- define "karpenter.bootstrapTokenKeySecretName" -}}
{{- printf "%s-bootstrap-token-key" (include "karpenter.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Where the controller's pods mount the bootstrap token key. */}}
{{- define "karpenter.bootstrapTokenKeyMountPath" -}}
/var/run/secrets/karpenter.k8s.linode/bootstrap-token-key
{{- end }}

{{/* The controller's user name, as kube-apiserver authenticates its ServiceAccount token. */}}
{{- define "karpenter.serviceAccountUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "karpenter.serviceAccountName" .) }}
{{- end }}

{{/* The controller image; the alpha chart's controller.image and imagePullPolicy are read too. */}}
{{- define "karpenter.image" -}}
{{- $alpha := include "karpenter.alpha.image" . | fromJson }}
{{- $repository := $alpha.repository | default .Values.image.repository }}
{{- $tag := $alpha.tag | default .Values.image.tag | default (printf "v%s" .Chart.AppVersion) }}
{{- $digest := $alpha.digest | default .Values.image.digest }}
{{- if $digest }}
{{- printf "%s:%s@%s" $repository $tag $digest }}
{{- else }}
{{- printf "%s:%s" $repository $tag }}
{{- end }}
{{- end }}

{{/* FEATURE_GATES for Karpenter core, from settings.featureGates. */}}
{{- define "karpenter.featureGates" -}}
{{- $gates := .Values.settings.featureGates -}}
NodeRepair={{ $gates.nodeRepair }},NodeOverlay={{ $gates.nodeOverlay }},StaticCapacity={{ $gates.staticCapacity }},CapacityBuffer={{ $gates.capacityBuffer }},PodDeletionCostManagement={{ $gates.podDeletionCostManagement }}
{{- end }}

{{/* Fails the install with a message naming the value to set, rather than letting the controller
crash-loop. values.schema.json refuses unknown values and bad enums before this runs. */}}
{{- define "karpenter.validateValues" -}}
{{- include "karpenter.alpha.validate" . }}
{{- if and (not .Values.serviceAccount.create) (not .Values.serviceAccount.name) }}
{{- fail "serviceAccount.create=false needs serviceAccount.name, the ServiceAccount you made for the controller: without it the chart would bind the controller's roles to the namespace's default ServiceAccount, and so give them to every pod that runs as it" }}
{{- end }}
{{- if and .Values.networkPolicy.enabled (not .Values.networkPolicy.webhookFrom) }}
{{- fail "networkPolicy.enabled needs networkPolicy.webhookFrom, where the API server calls the webhooks from (an ipBlock of the control plane's addresses, or the pods of its network proxy): without it the NetworkPolicy would cut the API server off the conversion and Node webhooks" }}
{{- end }}
{{- if and (eq .Values.settings.mode "lke") (not .Values.settings.clusterName) }}
{{- fail "settings.clusterName is required: set it to the label of your LKE cluster (--set settings.clusterName=my-cluster)" }}
{{- end }}
{{- if and (not (include "karpenter.userSecret" .)) (not .Values.apiToken) }}
{{- fail "a Linode API token is required: --set apiToken=$LINODE_TOKEN, or --set existingSecret=<Secret name> for a Secret holding it under existingSecretKey" }}
{{- end }}
{{- /* With credentialsSecretRef, the Secret's CLUSTER_REGION may give the region. */}}
{{- if and (eq .Values.settings.mode "instance") (not .Values.region) (not .Values.credentialsSecretRef) }}
{{- fail "region is required in instance mode: there is no LKE cluster to take it from (--set region=us-ord)" }}
{{- end }}
{{- end }}

{{/* Adds the chart's selector labels to every pod (anti-)affinity term and topology spread
constraint that has no labelSelector, so `topologyKey: kubernetes.io/hostname` alone means
"not next to another controller replica". */}}
{{- define "karpenter.withSelector" -}}
{{- if not (hasKey ._target "labelSelector") }}
{{- $_ := set ._target "labelSelector" (dict "matchLabels" (include "karpenter.selectorLabels" .root | fromYaml)) }}
{{- end }}
{{- end }}

{{- define "karpenter.affinity" -}}
{{- $affinity := deepCopy .Values.affinity }}
{{- range $kind := list "podAffinity" "podAntiAffinity" }}
{{- with (get $affinity $kind) }}
{{- range $term := (get . "requiredDuringSchedulingIgnoredDuringExecution" | default list) }}
{{- include "karpenter.withSelector" (dict "_target" $term "root" $) }}
{{- end }}
{{- range $weighted := (get . "preferredDuringSchedulingIgnoredDuringExecution" | default list) }}
{{- include "karpenter.withSelector" (dict "_target" $weighted.podAffinityTerm "root" $) }}
{{- end }}
{{- end }}
{{- end }}
{{- toYaml $affinity }}
{{- end }}

{{- define "karpenter.topologySpreadConstraints" -}}
{{- $constraints := deepCopy .Values.topologySpreadConstraints }}
{{- range $constraint := $constraints }}
{{- include "karpenter.withSelector" (dict "_target" $constraint "root" $) }}
{{- end }}
{{- toYaml $constraints }}
{{- end }}

{{/* The node identity component (instance mode): its objects' name, its pods' selector labels, and
its user name as kube-apiserver authenticates its ServiceAccount. */}}
{{- define "karpenter.nodeIdentity.fullname" -}}
{{- printf "%s-node-identity" (include "karpenter.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "karpenter.nodeIdentity.selectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-node-identity" (include "karpenter.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "karpenter.nodeIdentity.serviceAccountUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "karpenter.nodeIdentity.fullname" .) }}
{{- end }}

{{/* The controller's affinity for the node identity component's pods: terms without a
labelSelector get the component's own selector labels. */}}
{{- define "karpenter.nodeIdentity.affinity" -}}
{{- $affinity := deepCopy .Values.affinity }}
{{- $labels := include "karpenter.nodeIdentity.selectorLabels" . | fromYaml }}
{{- range $kind := list "podAffinity" "podAntiAffinity" }}
{{- with (get $affinity $kind) }}
{{- range $term := (get . "requiredDuringSchedulingIgnoredDuringExecution" | default list) }}
{{- if not (hasKey $term "labelSelector") }}{{ $_ := set $term "labelSelector" (dict "matchLabels" $labels) }}{{ end }}
{{- end }}
{{- range $weighted := (get . "preferredDuringSchedulingIgnoredDuringExecution" | default list) }}
{{- if not (hasKey $weighted.podAffinityTerm "labelSelector") }}{{ $_ := set $weighted.podAffinityTerm "labelSelector" (dict "matchLabels" $labels) }}{{ end }}
{{- end }}
{{- end }}
{{- end }}
{{- toYaml $affinity }}
{{- end }}
