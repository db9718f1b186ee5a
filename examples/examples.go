// Package examples holds the README's example manifests, so that a binary can carry them:
// `karpenter-linode plan` plans for the README's NodePool (default.yaml) when it is given none.
package examples

import _ "embed"

// DefaultFile is the README's NodePool and LinodeNodeClass, by the name the README gives it.
const DefaultFile = "examples/default.yaml"

// Default is the content of default.yaml.
//
//go:embed default.yaml
var Default []byte
