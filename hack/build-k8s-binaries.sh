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
# The build uses the flags the Makefile gives every build (CGO_ENABLED=0, -trimpath), and
# hack/tools requires the same versions as the project's go.mod for every module both import
# (hack/verify.sh checks it): then client-go, apimachinery and the rest, compiled once here, are
# reused from the build cache by the project's own builds, tests and release, minutes less on a
# new machine.
set -euo pipefail

export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
export CGO_ENABLED=0
[[ " ${GOFLAGS:-} " == *" -trimpath "* ]] || export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"

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

# Every missing binary is built by one go build: the packages they share compile once, and one
# binary's link (a minute for kube-apiserver, on one core) overlaps the others' compiles. The
# version variables of all of them go in one -ldflags; each binary links only its own.
ldflags="$k8s_ldflags -X go.etcd.io/etcd/api/v3/version.GitSHA=release-$etcd_version"
ldflags+=" -X sigs.k8s.io/kwok/pkg/consts.Version=$kwok_version"

declare -A package_of=(
  [etcd]=go.etcd.io/etcd/server/v3
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [kubectl]=k8s.io/kubernetes/cmd/kubectl
  [kwok]=sigs.k8s.io/kwok/cmd/kwok
)
# go build names a binary after its package's last element, a major version suffix left out.
declare -A built_as=([etcd]=server)

all=(etcd kube-apiserver kube-scheduler kube-controller-manager kubectl kwok)
missing=()
for name in "${@:-${all[@]}}"; do
  if [[ -z "${package_of[$name]:-}" ]]; then
    echo "build-k8s-binaries.sh: unknown binary \"$name\"; known: ${all[*]}" >&2
    exit 2
  fi
  if [[ -x "$bin_dir/$name" ]]; then
    echo ">> $name: already built" >&2
  else
    missing+=("$name")
  fi
done

if ((${#missing[@]})); then
  echo ">> building ${missing[*]} (several minutes on a cold cache)" >&2
  start=$SECONDS
  out="$(mktemp -d "$bin_dir/.build.XXXXXX")"
  trap 'rm -rf "$out"' EXIT
  packages=()
  for name in "${missing[@]}"; do packages+=("${package_of[$name]}"); done
  # GOGC=200: the compiler and the linker collect garbage less often (the Makefile's BUILD_GOGC).
  (cd "$here/tools" && GOGC=200 go build -ldflags "$ldflags" -o "$out/" "${packages[@]}")
  for name in "${missing[@]}"; do
    mv "$out/${built_as[$name]:-$name}" "$bin_dir/$name"
  done
  echo ">> built ${missing[*]} in $((SECONDS - start))s" >&2
fi

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
