package environment

import "github.com/linode/karpenter-provider-linode/test/localcluster/component"

// KubernetesVersion is the version of the control-plane binaries hack/build-k8s-binaries.sh builds.
const KubernetesVersion = component.KubernetesVersion
