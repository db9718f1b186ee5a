package localcluster

import (
	"net/http"
	"strings"
	"testing"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// TestLinodeRefusalsAreTheControllersOnce sends a body Linode's rules refuse as the controller
// and as another client: only the controller's is reported, and only once.
func TestLinodeRefusalsAreTheControllersOnce(t *testing.T) {
	e := emulator.New()
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	c := &Cluster{Emulator: e}
	send := func(userAgent string) {
		req, err := http.NewRequest(http.MethodPut, e.URL()+"/v4/linode/instances/1/configs/2", strings.NewReader(`{"interfaces":null}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+e.Token())
		req.Header.Set("User-Agent", userAgent)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	send("linodego/v1.69.1 https://github.com/linode/linodego")
	send(linode.DefaultClientOptions().UserAgent)
	refusals := c.LinodeRefusals()
	if len(refusals) != 1 || !strings.Contains(refusals[0], "PUT /v4/linode/instances/1/configs/2: interfaces:") {
		t.Fatalf("LinodeRefusals = %q; want the controller's one", refusals)
	}
	if again := c.LinodeRefusals(); len(again) != 0 {
		t.Fatalf("LinodeRefusals again = %q; want none", again)
	}
}
