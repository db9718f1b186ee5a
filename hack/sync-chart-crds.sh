#!/usr/bin/env bash
# Copies every CRD the controller needs into charts/karpenter-crd/templates: ours, generated into
# pkg/apis/crds, with the conversion webhook added, and Karpenter core's, from the
# sigs.k8s.io/karpenter module go.mod requires (so upgrading core upgrades the chart).
# `make generate` runs it; the chart tests fail when a copy differs from its source.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"

core_dir="$(go list -m -f '{{.Dir}}' sigs.k8s.io/karpenter)"
if [[ -z "$core_dir" || ! -d "$core_dir/pkg/apis/crds" ]]; then
  echo "sigs.k8s.io/karpenter is not in the module cache: run 'go mod download'" >&2
  exit 1
fi

target=charts/karpenter-crd/templates
mkdir -p "$target"
rm -f "$target"/*.yaml
# The CRDs are templates, not files under crds/, because Helm installs crds/ once and never
# upgrades them; templates are upgraded with the release.
install -m 0644 pkg/apis/crds/*.yaml "$target"/
install -m 0644 "$core_dir"/pkg/apis/crds/*.yaml "$target"/

# keepOnUninstall (on by default) makes Helm leave the CRDs, and so every NodePool and NodeClaim,
# in place when the release is uninstalled.
keep='    {{- if .Values.keepOnUninstall }}
    helm.sh/resource-policy: keep
    {{- end }}'
for crd in "$target"/*.yaml; do
  awk -v keep="$keep" '{ print } /^  annotations:$/ && !done { print keep; done = 1 }' "$crd" >"$crd.tmp"
  mv "$crd.tmp" "$crd"
  chmod 0644 "$crd"
done

# LinodeNodeClass serves v1alpha1 beside v1: kube-apiserver converts between them through the
# controller's webhook (pkg/webhooks/conversion), whose Service the chart's values name. The
# controller fills in the caBundle, as it does for its MutatingWebhookConfiguration.
conversion='  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions:
      - v1
      # caBundle is filled in by the controller, which issues the webhook'"'"'s certificate itself.
      clientConfig:
        service:
          name: {{ .Values.webhook.serviceName }}
          namespace: {{ .Values.webhook.serviceNamespace | default .Release.Namespace }}
          path: /convert
          port: {{ .Values.webhook.port }}'
crd="$target/karpenter.k8s.linode_linodenodeclasses.yaml"
awk -v conversion="$conversion" '{ print } /^spec:$/ && !done { print conversion; done = 1 }' "$crd" >"$crd.tmp"
mv "$crd.tmp" "$crd"
chmod 0644 "$crd"
