package localcluster

import (
	"fmt"
	"strings"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
)

// LinodeRefusals returns the Linode API requests of the controller (and of the node identity
// component: any client with the provider's user agent) whose bodies the emulator's request
// rules refused since the last call, as "METHOD path: field: reason (rule's source)": each is a
// body the real Linode API would refuse. Requests of tests and other clients are left out.
func (c *Cluster) LinodeRefusals() []string {
	all := c.Emulator.RefusedRequests()
	fresh := all[min(c.linodeRefusalsSeen, len(all)):]
	c.linodeRefusalsSeen = len(all)
	userAgent := linode.DefaultClientOptions().UserAgent
	var out []string
	for _, r := range fresh {
		if !strings.HasPrefix(r.UserAgent, userAgent) {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s: %s: %s (%s); body %s", r.Method, r.Path, r.Field, r.Reason, r.Source, r.Body))
	}
	return out
}
