#!/usr/bin/env bash
# Fails when a generated file differs from what `make generate` produces (stale, or edited by
# hand: the CRDs, deepcopy code, the charts' READMEs and the settings and metrics references), when go.mod/go.sum (or hack/tools') are untidy or disagree on a module both compile, or
# when Go files are not gofmt'ed. Leaves the tree as it was.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"

generated=(pkg/apis/crds pkg/apis/v1/zz_generated.deepcopy.go pkg/apis/v1alpha1/zz_generated.deepcopy.go charts/karpenter-crd/templates
  charts/karpenter/README.md charts/karpenter-crd/README.md docs/reference)
snapshot="$(mktemp -d)"
trap 'rm -rf "$snapshot"' EXIT
cp -r --parents "${generated[@]}" "$snapshot"

make --no-print-directory generate >/dev/null
status=0
for path in "${generated[@]}"; do
  if ! diff -ru "$snapshot/$path" "$path"; then
    status=1
  fi
done
# Put back what was there, so that verify never rewrites a file under someone's hands.
rm -rf "${generated[@]}"
cp -r "$snapshot/." .
if [[ $status -ne 0 ]]; then
  echo "generated files are out of date or were edited by hand: run 'make generate' and commit the result" >&2
fi

for module in . hack/tools hack/image; do
  if ! (cd "$module" && go mod tidy -diff >/dev/null); then
    echo "$module/go.mod or go.sum is not tidy: run 'go mod tidy' there" >&2
    status=1
  fi
done
if ! hack/check-shared-versions.sh; then
  status=1
fi
unformatted="$(gofmt -l $(git ls-files '*.go' | grep -v '^hack/'))"
if [[ -n "$unformatted" ]]; then
  echo "not gofmt'ed: $unformatted" >&2
  status=1
fi
exit $status
