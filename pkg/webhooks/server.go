// Package webhooks holds the controller's webhooks (node admission, LinodeNodeClass conversion),
// the certificate they are served with (certificate), and the server they share.
package webhooks

import (
	"crypto/tls"
	"fmt"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// MaxRequestBytes is the largest request body the server reads: the limit controller-runtime
// puts on admission requests, over four times a review of the largest object etcd stores (1.5
// MiB, in object and oldObject). A body said to be larger is refused unread; one that grows past
// it is cut off there.
const MaxRequestBytes = 7 << 20

// NewServer returns the HTTPS server the webhooks are served on, listening on host:port (every
// interface when host is empty) with the certificate configureTLS provides. It speaks TLS 1.2 or
// newer only, and HTTP/1.1 only: the apiserver needs nothing else, and HTTP/2's stream handling
// has been the way in for denial-of-service attacks (CVE-2023-44487). Every webhook registered on
// it reads at most MaxRequestBytes of a request: any pod that can reach the port can send one.
func NewServer(host string, port int, configureTLS func(*tls.Config)) webhook.Server {
	return limitedServer{Server: webhook.NewServer(webhook.Options{
		Host: host,
		Port: port,
		TLSOpts: []func(*tls.Config){configureTLS, func(config *tls.Config) {
			config.MinVersion = tls.VersionTLS12
			config.NextProtos = []string{"http/1.1"}
		}},
	})}
}

// limitedServer registers every webhook behind the body limit.
type limitedServer struct {
	webhook.Server
}

func (s limitedServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, limitBody(hook))
}

// limitBody refuses a request whose declared length is over MaxRequestBytes before reading any of
// it, and ends the body of any other at MaxRequestBytes: the conversion webhook decodes its body
// as a stream, and would otherwise read all that a client sends.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxRequestBytes {
			http.Error(w, fmt.Sprintf("a request body of %d bytes is over the webhook server's limit of %d", r.ContentLength, MaxRequestBytes), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes)
		next.ServeHTTP(w, r)
	})
}
