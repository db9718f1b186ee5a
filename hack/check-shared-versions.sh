#!/usr/bin/env bash
# Fails when a module that both the project and the Kubernetes binaries (hack/tools) compile is
# required at different versions in the two go.mod files. With the same versions (and the same
# build flags: the Makefile's, see build-k8s-binaries.sh) the project's builds reuse the packages the binaries'
# build put in the Go build cache: minutes saved on a new machine. To fix a mismatch, require the
# higher version in both: `go get MODULE@VERSION` here or in hack/tools, then `go mod tidy`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"

# module@version of every non-standard package a build compiles (a replaced module by its replacement).
module_versions='{{if not .Standard}}{{with .Module}}{{with .Replace}}{{.Path}}@{{.Version}}{{else}}{{.Path}}@{{.Version}}{{end}}{{end}}{{end}}'
project="$(go list -deps -test -f "$module_versions" ./... | sort -u)"
binaries="$(cd hack/tools && go list -deps -f "$module_versions" \
  go.etcd.io/etcd/server/v3 sigs.k8s.io/kwok/cmd/kwok \
  k8s.io/kubernetes/cmd/{kube-apiserver,kube-scheduler,kube-controller-manager,kubectl} | sort -u)"

mismatches="$(awk -F@ 'NR == FNR { if ($1 != "") project[$1] = $2; next }
  ($1 in project) && project[$1] != $2 { printf "  %s: %s in go.mod, %s in hack/tools/go.mod\n", $1, project[$1], $2 }' \
  <(echo "$project") <(echo "$binaries"))"
if [[ -n "$mismatches" ]]; then
  echo "modules the project and the Kubernetes binaries both compile, at different versions:" >&2
  echo "$mismatches" >&2
  exit 1
fi
