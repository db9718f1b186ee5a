package linode_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
)

// FuzzOnlyA404IsGone: whatever the API answers a read of a Linode, with whatever body, the
// provider concludes the Linode is gone only from a 404; an answer that is not a 404 is never
// taken for one, however its body reads, and a 404 is neither retryable nor a refusal. No answer
// of 400 or more reads as a Linode.
func FuzzOnlyA404IsGone(f *testing.F) {
	for _, seed := range []struct {
		status int
		body   string
	}{
		{404, `{"errors": [{"reason": "Not found"}]}`},
		{404, ``},
		{400, `{"errors": [{"reason": "Not found"}]}`},
		{500, `{"errors": [{"reason": "[404] Not found"}]}`},
		{200, `{"id": 7`},
		{403, `{"errors": [{"reason": "The Linode plan you chose is not currently available in the selected region."}]}`},
		{429, `not json`},
		{502, `<html>Bad Gateway</html>`},
	} {
		f.Add(seed.status, seed.body)
	}
	var answer struct {
		status int
		body   string
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(answer.status)
		_, _ = w.Write([]byte(answer.body))
	}))
	f.Cleanup(api.Close)
	client := client(f, api.URL)
	f.Fuzz(func(t *testing.T, status int, body string) {
		if status < 200 || status > 599 {
			return // what net/http can answer
		}
		answer.status, answer.body = status, body
		_, err := client.GetInstance(context.Background(), 7)
		if status >= 400 && err == nil {
			t.Fatalf("answered %d %q: read as a Linode", status, body)
		}
		for _, wrapped := range []error{err, fmt.Errorf("reading Linode 7: %w", err)} {
			gone := linode.IsNotFound(wrapped)
			if gone != (status == http.StatusNotFound) {
				t.Fatalf("answered %d %q: IsNotFound = %v (%v)", status, body, gone, err)
			}
			if _, refused := linode.AsRefusal(wrapped); gone && (refused || linode.IsRetryable(wrapped) || linode.IsUnauthorized(wrapped)) {
				t.Fatalf("a 404 is also refused %v, retryable %v or unauthorized %v", refused, linode.IsRetryable(wrapped), linode.IsUnauthorized(wrapped))
			}
		}
	})
}
