// Package crds embeds the CustomResourceDefinitions generated from pkg/apis/v1 by `make generate`.
package crds

import (
	_ "embed"
)

// LinodeNodeClass is the CRD of karpenter.k8s.linode/v1 LinodeNodeClass, as YAML.
//
//go:embed karpenter.k8s.linode_linodenodeclasses.yaml
var LinodeNodeClass []byte
