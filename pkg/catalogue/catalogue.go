// Package catalogue holds a snapshot of Linode's read-only catalogue, built into the binaries
// that need one without a Linode account: the plan CLI (karpenter-linode plan) plans against it,
// and the test bench's API emulator serves it. catalogue.json has the API's "regions" (with
// capabilities), "types" (plans with region prices and add-ons), "availability" (plans each region
// has sold out), LKE types and versions, public images, and "as_of", the day it was read.
// `go run ./hack/refresh-catalogue` reads it again from the Linode API (a read-only token is
// enough) and prints the date it wrote.
package catalogue

import (
	_ "embed"
	"slices"
)

//go:embed catalogue.json
var snapshot []byte

// JSON is a copy of the snapshot, catalogue.json.
func JSON() []byte { return slices.Clone(snapshot) }
