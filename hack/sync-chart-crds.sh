#!/usr/bin/env bash
# Copies every CRD the controller needs into charts/karpenter-crd/templates: ours, generated into
# pkg/apis/crds, and Karpenter core's, from the sigs.k8s.io/karpenter module go.mod requires (so
# upgrading core upgrades the chart). `make generate` runs it; the chart tests fail when a copy
# differs from its source.
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
