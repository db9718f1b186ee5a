#!/usr/bin/env bash
# Writes the release's text files into DIST from the artifacts make release-dry-run built there:
# the krew manifest of the kubectl plugin (its archives' URLs on the release and their sha256),
# checksums.txt of every file a release attaches, and release-notes.md, the CHANGELOG.md section
# of VERSION. Fails when CHANGELOG.md has no section for VERSION.
#
# Usage: hack/release-files.sh VERSION DIST
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
version="$1"
dist="$2"
downloads="https://github.com/linode/karpenter-provider-linode/releases/download/v${version}"

notes="$(awk -v heading="## [${version}]" 'index($0, heading) == 1 { found = 1; next } found && /^## / { exit } found' CHANGELOG.md)"
if [[ -z "${notes//[[:space:]]/}" ]]; then
  echo "CHANGELOG.md has no section '## [${version}]': write the release's notes there first" >&2
  exit 1
fi
# The notes' links are relative to the repository: on the release page they point at the tag.
printf '%s\n' "$notes" | sed -e '/./,$!d' \
  -e "s#](\([a-zA-Z0-9_./-]*\.md\))#](https://github.com/linode/karpenter-provider-linode/blob/v${version}/\1)#g" >"$dist/release-notes.md"

mkdir -p "$dist/krew"
manifest="$dist/krew/linode-plan.yaml"
cat >"$manifest" <<YAML
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: linode-plan
spec:
  version: v${version}
  homepage: https://github.com/linode/karpenter-provider-linode
  shortDescription: Plan what Karpenter would launch on Linode, and its cost
  description: |
    Answers, before anything is deployed, which Linode plans Karpenter for Linode would launch
    for a set of manifests or for a cluster's pending and running pods, and what they would cost.
  platforms:
YAML
for archive in "$dist"/cli/karpenter-linode_*.tar.gz; do
  platform="$(basename "$archive" .tar.gz)"
  platform="${platform#karpenter-linode_}"
  cat >>"$manifest" <<YAML
  - selector:
      matchLabels:
        os: ${platform%_*}
        arch: ${platform#*_}
    uri: ${downloads}/$(basename "$archive")
    sha256: $(sha256sum "$archive" | cut -d' ' -f1)
    files:
    - from: karpenter-linode
      to: kubectl-linode_plan
    - from: LICENSE
      to: .
    bin: kubectl-linode_plan
YAML
done

(cd "$dist" && sha256sum cli/*.tar.gz charts/*.tgz krew/linode-plan.yaml karpenter-provider-linode.spdx.json |
  sed 's#  [a-z]*/#  #' >checksums.txt)
echo "release files of ${version} in ${dist}: release-notes.md, krew/linode-plan.yaml, checksums.txt"
