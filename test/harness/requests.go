package harness

import (
	"strings"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// IsControllerRequest tells the controller's requests by the user agent pkg/linode gives it.
func IsControllerRequest(r emulator.RequestRecord) bool {
	return strings.HasPrefix(r.UserAgent, linode.UserAgentProduct+"/")
}

// CreateRoutes are the requests that launch a Linode: an LKE pool (LKE mode) or a Linode
// (instance mode).
var CreateRoutes = map[string]bool{
	"POST /lke/clusters/{clusterId}/pools": true,
	"POST /linode/instances":               true,
}
