package emulator

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// How users reach an LKE cluster's control plane: its API endpoints, a kubeconfig for them
// (which deleting regenerates), and the control plane's access control list.

// controlPlaneACL limits who reaches a cluster's control plane.
type controlPlaneACL struct {
	Enabled    bool
	RevisionID string
	IPv4, IPv6 []string
}

type aclAddressesWire struct {
	IPv4 []string `json:"ipv4"`
	IPv6 []string `json:"ipv6"`
}

type aclWire struct {
	Enabled    bool             `json:"enabled"`
	RevisionID string           `json:"revision-id,omitempty"`
	Addresses  aclAddressesWire `json:"addresses"`
}

type aclRequest struct {
	Enabled    *bool   `json:"enabled"`
	RevisionID *string `json:"revision-id"`
	Addresses  *struct {
		IPv4 []string `json:"ipv4"`
		IPv6 []string `json:"ipv6"`
	} `json:"addresses"`
}

func (acl *controlPlaneACL) toWire() aclWire {
	return aclWire{Enabled: acl.Enabled, RevisionID: acl.RevisionID, Addresses: aclAddressesWire{IPv4: nonNil(acl.IPv4), IPv6: nonNil(acl.IPv6)}}
}

// newACL validates a requested ACL: addresses are prefixes, a bare address a /32 or /128. A
// revision id the request leaves out is made up, as the API does.
func newACL(field string, req aclRequest) (*controlPlaneACL, *apiError) {
	acl := &controlPlaneACL{Enabled: req.Enabled == nil || *req.Enabled}
	if req.Addresses != nil {
		for _, family := range []struct {
			name   string
			in     []string
			out    *[]string
			isIPv4 bool
		}{{"ipv4", req.Addresses.IPv4, &acl.IPv4, true}, {"ipv6", req.Addresses.IPv6, &acl.IPv6, false}} {
			for _, address := range family.in {
				prefix, err := parseACLPrefix(address)
				if err != nil || prefix.Addr().Is4() != family.isIPv4 {
					return nil, errInvalid(field+".addresses."+family.name, "Must be "+family.name+" addresses or ranges")
				}
				*family.out = append(*family.out, prefix.String())
			}
		}
	}
	acl.RevisionID = strings.ToLower(rand.Text())
	setIfGiven(&acl.RevisionID, req.RevisionID)
	return acl, nil
}

func parseACLPrefix(address string) (netip.Prefix, error) {
	if strings.Contains(address, "/") {
		return netip.ParsePrefix(address)
	}
	addr, err := netip.ParseAddr(address)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(addr, addr.BitLen()), nil
}

func (e *Emulator) getControlPlaneACL(r *http.Request) (any, *apiError) {
	c, err := e.lookupCluster(r)
	if err != nil {
		return nil, err
	}
	acl := c.ACL
	if acl == nil {
		acl = &controlPlaneACL{}
	}
	return map[string]aclWire{"acl": acl.toWire()}, nil
}

type aclUpdateRequest struct {
	ACL aclRequest `json:"acl"`
}

func (e *Emulator) updateControlPlaneACL(c *lkeCluster, req aclUpdateRequest) (any, *apiError) {
	acl, err := newACL("acl", req.ACL)
	if err != nil {
		return nil, err
	}
	c.ACL = acl
	return map[string]aclWire{"acl": acl.toWire()}, nil
}

func (e *Emulator) deleteControlPlaneACL(c *lkeCluster) { c.ACL = nil }

// endpointID is the name of a cluster's endpoints, in the UUID form LKE uses, derived from its id
// so that it takes nothing from the emulator's seeded randomness.
func endpointID(clusterID int) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", clusterID, clusterID)
}

// apiEndpoints are where a cluster's control plane answers, on LKE's domain.
func apiEndpoints(c *lkeCluster) []string {
	host := fmt.Sprintf("https://%s.%s-gw.linodelke.net", c.EndpointID, c.Region)
	return []string{host + ":443", host + ":6443"}
}

// lookupUpCluster finds the request's cluster, and answers 503, as LKE does, until its control
// plane has had the time a Linode takes to provision: before then it has no endpoints and no
// kubeconfig (what says which was asked for).
func (e *Emulator) lookupUpCluster(what string) func(*http.Request) (*lkeCluster, *apiError) {
	return func(r *http.Request) (*lkeCluster, *apiError) {
		c, err := e.lookupCluster(r)
		if err != nil {
			return nil, err
		}
		if e.clock.Now().Before(c.Created.Add(e.cfg.delays.Provisioning)) {
			return nil, errStatus(http.StatusServiceUnavailable, "Cluster "+what+" not yet available. Please try again later.")
		}
		return c, nil
	}
}

type apiEndpointWire struct {
	Endpoint string `json:"endpoint"`
}

func apiEndpointsWire(c *lkeCluster) []apiEndpointWire {
	var items []apiEndpointWire
	for _, endpoint := range apiEndpoints(c) {
		items = append(items, apiEndpointWire{Endpoint: endpoint})
	}
	return items
}

// kubeconfigWire is a kubeconfig for the cluster's first endpoint with the cluster's current
// admin token, base64-encoded as the API sends it.
func kubeconfigWire(c *lkeCluster) map[string]string {
	name := "lke" + fmt.Sprint(c.ID)
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- cluster:
    server: %s
  name: %s
users:
- name: %s-admin
  user:
    token: %s
contexts:
- context:
    cluster: %s
    namespace: default
    user: %s-admin
  name: %s-ctx
current-context: %s-ctx
`, apiEndpoints(c)[0], name, name, c.AdminToken, name, name, name, name)
	return map[string]string{"kubeconfig": base64.StdEncoding.EncodeToString([]byte(kubeconfig))}
}

// deleteKubeconfig regenerates the cluster's admin token: kubeconfigs fetched before stop working.
func (e *Emulator) deleteKubeconfig(c *lkeCluster) { c.AdminToken = rand.Text() }

type tierVersionWire struct {
	ID   string `json:"id"`
	Tier string `json:"tier"`
}

// listTierVersions lists a tier's Kubernetes versions.
func (e *Emulator) listTierVersions(r *http.Request) (any, *apiError) {
	tier := r.PathValue("tier")
	versions, ok := e.cat.lkeVersions[tier]
	if !ok {
		return nil, errNotFound()
	}
	var items []tierVersionWire
	for _, v := range versions {
		items = append(items, tierVersionWire{ID: v, Tier: tier})
	}
	return mustList(newList(items, tierVersionWire{}))
}
