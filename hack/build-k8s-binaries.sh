#!/usr/bin/env bash
# Builds the real Kubernetes binaries the tests and the local cluster run: kube-apiserver,
# kube-scheduler, kube-controller-manager, kubectl (Kubernetes v1.36.1), etcd (v3.6.8) and kwok (v0.8.0).
# They cannot be downloaded here, so they are compiled from the Go module proxy through the
# nested tools module in hack/tools. Binaries go to a cache directory outside the work tree and
# are rebuilt only when missing, with kwok's stage manifests beside them. Prints the directory on the last line of stdout.
#
#   hack/build-k8s-binaries.sh [NAME ...]   only these binaries (default: all six)
#   K8S_BIN_DIR  where to put the binaries (default: $XDG_CACHE_HOME/karpenter-provider-linode/k8s-v1.36.1)
#
# The build uses the Go command's default flags (no -trimpath, cgo as the machine has it), and
# hack/tools requires the same versions as the project's go.mod for every module both import
# (hack/verify.sh checks it): then client-go, apimachinery and the rest, compiled once here, are
# reused from the build cache by the project's own builds and tests, minutes less on a new machine.
set -euo pipefail

export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"

k8s_version=v1.36.1
etcd_version=v3.6.8
kwok_version=v0.8.0

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-provider-linode"
bin_dir="${K8S_BIN_DIR:-$cache_root/k8s-$k8s_version}"
mkdir -p "$bin_dir"

k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=36"
  k8s_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

# build NAME PACKAGE LDFLAGS
build() {
  local name=$1 pkg=$2 ldflags=$3
  if [[ -x "$bin_dir/$name" ]]; then
    echo ">> $name: already built" >&2
    return
  fi
  echo ">> $name: building $pkg (several minutes on a cold cache)" >&2
  local start=$SECONDS
  (cd "$here/tools" && go build -ldflags "$ldflags" -o "$bin_dir/$name.tmp" "$pkg")
  mv "$bin_dir/$name.tmp" "$bin_dir/$name"
  echo ">> $name: done in $((SECONDS - start))s" >&2
}

all=(etcd kube-apiserver kube-scheduler kube-controller-manager kubectl kwok)
for name in "${@:-${all[@]}}"; do
  case $name in
    etcd) build etcd go.etcd.io/etcd/server/v3 "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=release-$etcd_version" ;;
    kube-apiserver | kube-scheduler | kube-controller-manager | kubectl)
      build "$name" "k8s.io/kubernetes/cmd/$name" "$k8s_ldflags" ;;
    kwok) build kwok sigs.k8s.io/kwok/cmd/kwok "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$kwok_version" ;;
    *) echo "build-k8s-binaries.sh: unknown binary \"$name\"; known: ${all[*]}" >&2; exit 2 ;;
  esac
done

# kwok ships its behaviours (make a node Ready, keep its lease, run and delete pods) as Stage
# manifests in its module; the local cluster passes them to kwok with -c.
stages_dir="$bin_dir/kwok-stages"
if [[ ! -s "$stages_dir/pod-ready.yaml" ]]; then
  kwok_src="$(cd "$here/tools" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
  mkdir -p "$stages_dir"
  for stage in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
    pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
    install -m 0644 "$kwok_src/kustomize/stage/$stage.yaml" "$stages_dir/"
  done
  echo ">> kwok stages: copied to $stages_dir" >&2
fi

echo "$bin_dir"
