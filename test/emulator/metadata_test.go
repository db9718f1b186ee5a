package emulator

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linode/linodego"
)

// TestMetadataService reads a Linode's Metadata service with Linode's own client, as software on
// the Linode would.
func TestMetadataService(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	vpcID, _ := e.AddVPC("cluster", "us-ord")
	subnetID, _ := e.AddVPCSubnet(vpcID, "nodes", "10.0.8.0/24")
	userData := "#cloud-config\nhostname: worker\n"
	in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{
		Region: "us-ord", Type: "g6-standard-2", Label: "worker", Image: "linode/ubuntu24.04", Tags: []string{"team:a"},
		AuthorizedKeys: []string{testSSHKey}, AuthorizedUsers: []string{"ops"}, BackupsEnabled: true,
		Metadata:   &linodego.InstanceMetadataOptions{UserData: base64.StdEncoding.EncodeToString([]byte(userData))},
		Interfaces: []linodego.InstanceConfigInterfaceCreateOptions{{Purpose: linodego.InterfacePurposePublic}, {Purpose: linodego.InterfacePurposeVPC, SubnetID: &subnetID}},
	})
	if err != nil {
		t.Fatal(err)
	}
	client, err := e.NewMetadataClient(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	self, err := client.GetInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if self.ID != in.ID || self.Label != "worker" || self.Region != "us-ord" || self.Type != "g6-standard-2" || self.Specs.VCPUs != 2 ||
		self.Tags[0] != "team:a" || self.Image.ID != "linode/ubuntu24.04" || !self.Backups.Enabled || self.HostUUID == "" {
		t.Errorf("instance data: %+v", self)
	}
	if got, err := client.GetUserData(ctx); err != nil || got != userData {
		t.Errorf("user data %q, %v", got, err)
	}
	network, err := client.GetNetwork(ctx)
	if err != nil || len(network.IPv4.Public) != 1 || network.IPv4.Public[0].Addr().String() != in.IPv4[0].String() ||
		len(network.Interfaces) != 1 || network.Interfaces[0].IPAMAddress.String() != "10.0.8.2/32" {
		t.Errorf("network: %+v, %v", network, err)
	}
	keys, err := client.GetSSHKeys(ctx)
	if err != nil || len(keys.Users["root"]) != 1 || keys.Users["root"][0] != testSSHKey {
		t.Errorf("ssh keys: %+v, %v", keys, err)
	}
	if _, ok := keys.Users["ops"]; !ok {
		t.Errorf("authorized user ops missing: %+v", keys)
	}
}

// TestMetadataServiceText checks the plain-text answers tools such as curl get, and the token's
// scope and lifetime.
func TestMetadataServiceText(t *testing.T) {
	e, c, clk := startEmulator(t)
	ctx := context.Background()
	create := func(label string) *linodego.Instance {
		in, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-1", Label: label, Image: "linode/debian12", RootPass: "Not-a-real-password-1"})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	in, other := create("first"), create("second")
	do := func(method, url string, header map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	status, token := do(http.MethodPut, e.MetadataURL(in.ID)+"/v1/token", map[string]string{"Metadata-Token-Expiry-Seconds": "300"})
	if status != http.StatusOK || len(token) != 64 {
		t.Fatalf("token: %d %q", status, token)
	}
	status, text := do(http.MethodGet, e.MetadataURL(in.ID)+"/v1/instance", map[string]string{"Metadata-Token": token})
	for _, line := range []string{"id: " + strconv.Itoa(in.ID), "label: first", "specs.vcpus: 1", "type: g6-standard-1", "backups.enabled: false"} {
		if status != http.StatusOK || !strings.Contains(text, line+"\n") {
			t.Errorf("instance text lacks %q: %d\n%s", line, status, text)
		}
	}
	if status, body := do(http.MethodGet, e.MetadataURL(in.ID)+"/v1/user-data", map[string]string{"Metadata-Token": token}); status != http.StatusOK || body != "" {
		t.Errorf("user data of a Linode without any: %d %q", status, body)
	}
	for _, tc := range []struct {
		name   string
		url    string
		header map[string]string
		want   int
	}{
		{"no token", e.MetadataURL(in.ID) + "/v1/instance", nil, http.StatusUnauthorized},
		{"another Linode's token", e.MetadataURL(other.ID) + "/v1/instance", map[string]string{"Metadata-Token": token}, http.StatusUnauthorized},
		{"a Linode that does not exist", e.MetadataURL(other.ID+100) + "/v1/instance", map[string]string{"Metadata-Token": token}, http.StatusNotFound},
	} {
		if status, body := do(http.MethodGet, tc.url, tc.header); status != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, status, body, tc.want)
		}
	}
	if status, _ := do(http.MethodPut, e.MetadataURL(in.ID)+"/v1/token", map[string]string{"Metadata-Token-Expiry-Seconds": "0"}); status != http.StatusBadRequest {
		t.Errorf("a token valid for 0 s: %d", status)
	}
	clk.Step(300 * time.Second)
	if status, _ := do(http.MethodGet, e.MetadataURL(in.ID)+"/v1/instance", map[string]string{"Metadata-Token": token}); status != http.StatusUnauthorized {
		t.Errorf("an expired token: %d", status)
	}
}
