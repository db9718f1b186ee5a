package linode_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/linode/linodego"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
)

// TestARequestBodyNeverFollowsARedirectToAnotherHost: a create answered with a 307 or 308 to
// another host (a compromised proxy, a misconfigured API URL) is not sent there again: its body
// holds the user data, with a bootstrap token, and SSH keys. The create fails saying why. The
// same redirect within the API is followed, body and all.
func TestARequestBodyNeverFollowsARedirectToAnotherHost(t *testing.T) {
	const userData = "I2Nsb3VkLWNvbmZpZwp0b2tlbjogYWJjZGVmLjAxMjM0NTY3ODlhYmNkZWY="
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(other.Close)
	var bodiesWithinAPI []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/elsewhere-307/v4/linode/instances":
			http.Redirect(w, r, other.URL+"/v4/linode/instances", http.StatusTemporaryRedirect)
		case "/elsewhere-308/v4/linode/instances":
			http.Redirect(w, r, other.URL+"/v4/linode/instances", http.StatusPermanentRedirect)
		case "/moved/v4/linode/instances":
			http.Redirect(w, r, "/v4/linode/instances", http.StatusTemporaryRedirect)
		default:
			body, _ := io.ReadAll(r.Body)
			bodiesWithinAPI = append(bodiesWithinAPI, string(body))
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id": 7, "label": "node", "status": "provisioning"}`))
		}
	}))
	t.Cleanup(api.Close)
	opts := linode.InstanceCreateOptions{InstanceCreateOptions: linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2", Label: "node",
		AuthorizedKeys: []string{"ssh-ed25519 AAAA"}, Metadata: &linodego.InstanceMetadataOptions{UserData: userData}}}

	for _, prefix := range []string{"elsewhere-307", "elsewhere-308"} {
		_, err := client(t, api.URL+"/"+prefix).CreateInstance(context.Background(), opts)
		if err == nil || !strings.Contains(err.Error(), "another host") {
			t.Errorf("%s: a create redirected to another host: %v, want an error saying so", prefix, err)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the other host received %d requests, want none: the create's body would be there", n)
	}
	if _, err := client(t, api.URL+"/moved").CreateInstance(context.Background(), opts); err != nil {
		t.Fatalf("a create redirected within the API: %v", err)
	}
	if len(bodiesWithinAPI) != 1 || !strings.Contains(bodiesWithinAPI[0], userData) {
		t.Fatalf("the API received %q, want the create's body once", bodiesWithinAPI)
	}
}

// client is a client of the API at url, which answers in the test's own way: no retries, and no
// pacing, which a 429 would stop for a minute.
func client(t testing.TB, url string) *linode.Client {
	t.Helper()
	opts := linode.DefaultClientOptions()
	opts.URL, opts.Credentials, opts.RetryCount, opts.Budgets = url, linode.StaticCredentials("secret-token"), 0, nil
	c, err := linode.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
