package emulator

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/linode/linodego"
)

// TestLKEControlPlaneAccess: a new cluster's endpoints and kubeconfig come once its control
// plane is up; deleting the kubeconfig replaces its token; the control plane's ACL is set at
// create, replaced and removed.
func TestLKEControlPlaneAccess(t *testing.T) {
	_, c, clk := startEmulator(t)
	ctx := context.Background()
	enabled := true
	cluster, err := c.CreateLKECluster(ctx, linodego.LKEClusterCreateOptions{
		Label: "access", Region: "us-ord", K8sVersion: "1.35",
		NodePools:    []linodego.LKENodePoolCreateOptions{{Count: 1, Type: "g6-standard-2"}},
		ControlPlane: &linodego.LKEClusterControlPlaneOptions{ACL: &linodego.LKEClusterControlPlaneACLOptions{Enabled: &enabled, Addresses: &linodego.LKEClusterControlPlaneACLAddressesOptions{IPv4: &[]string{"10.0.0.1"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetLKEClusterKubeconfig(ctx, cluster.ID); err == nil {
		t.Fatal("kubeconfig of a control plane still starting")
	} else {
		wantAPIError(t, err, 503)
	}
	clk.Step(DefaultDelays().Provisioning)
	endpoints, err := c.ListLKEClusterAPIEndpoints(ctx, cluster.ID, nil)
	if err != nil || len(endpoints) != 2 || !strings.HasSuffix(endpoints[0].Endpoint, ".linodelke.net:443") {
		t.Fatalf("endpoints: %+v, %v", endpoints, err)
	}
	kubeconfig := func() string {
		t.Helper()
		got, err := c.GetLKEClusterKubeconfig(ctx, cluster.ID)
		if err != nil {
			t.Fatal(err)
		}
		decoded, err := base64.StdEncoding.DecodeString(got.KubeConfig)
		if err != nil || !strings.Contains(string(decoded), "server: "+endpoints[0].Endpoint) {
			t.Fatalf("kubeconfig %q, %v", decoded, err)
		}
		return string(decoded)
	}
	before := kubeconfig()
	if err := c.DeleteLKEClusterKubeconfig(ctx, cluster.ID); err != nil {
		t.Fatal(err)
	}
	if kubeconfig() == before {
		t.Fatal("the kubeconfig kept its token after being deleted")
	}

	acl, err := c.GetLKEClusterControlPlaneACL(ctx, cluster.ID)
	if err != nil || !acl.ACL.Enabled || len(acl.ACL.Addresses.IPv4) != 1 || acl.ACL.Addresses.IPv4[0] != "10.0.0.1/32" || acl.ACL.RevisionID == "" {
		t.Fatalf("ACL set at create: %+v, %v", acl, err)
	}
	_, err = c.UpdateLKEClusterControlPlaneACL(ctx, cluster.ID, linodego.LKEClusterControlPlaneACLUpdateOptions{
		ACL: linodego.LKEClusterControlPlaneACLOptions{Enabled: &enabled, Addresses: &linodego.LKEClusterControlPlaneACLAddressesOptions{IPv4: &[]string{"not-an-address"}}},
	})
	wantField(t, err, "acl.addresses.ipv4")
	updated, err := c.UpdateLKEClusterControlPlaneACL(ctx, cluster.ID, linodego.LKEClusterControlPlaneACLUpdateOptions{
		ACL: linodego.LKEClusterControlPlaneACLOptions{Enabled: &enabled, RevisionID: "rev-2", Addresses: &linodego.LKEClusterControlPlaneACLAddressesOptions{IPv6: &[]string{"2001:db8::/64"}}},
	})
	if err != nil || updated.ACL.RevisionID != "rev-2" || len(updated.ACL.Addresses.IPv4) != 0 || updated.ACL.Addresses.IPv6[0] != "2001:db8::/64" {
		t.Fatalf("ACL replaced: %+v, %v", updated, err)
	}
	if err := c.DeleteLKEClusterControlPlaneACL(ctx, cluster.ID); err != nil {
		t.Fatal(err)
	}
	if acl, err := c.GetLKEClusterControlPlaneACL(ctx, cluster.ID); err != nil || acl.ACL.Enabled {
		t.Fatalf("ACL removed: %+v, %v", acl, err)
	}

	versions, err := c.ListLKETierVersions(ctx, "enterprise", nil)
	if err != nil || len(versions) == 0 || versions[0].Tier != "enterprise" {
		t.Fatalf("enterprise versions: %+v, %v", versions, err)
	}
}
