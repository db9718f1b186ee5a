// Package webhooks holds the controller's webhooks (node admission, LinodeNodeClass conversion),
// the certificate they are served with (certificate), and the server they share.
package webhooks

import (
	"crypto/tls"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// NewServer returns the HTTPS server the webhooks are served on, listening on host:port (every
// interface when host is empty) with the certificate configureTLS provides. It speaks TLS 1.2 or
// newer only, and HTTP/1.1 only: the apiserver needs nothing else, and HTTP/2's stream handling
// has been the way in for denial-of-service attacks (CVE-2023-44487).
func NewServer(host string, port int, configureTLS func(*tls.Config)) webhook.Server {
	return webhook.NewServer(webhook.Options{
		Host: host,
		Port: port,
		TLSOpts: []func(*tls.Config){configureTLS, func(config *tls.Config) {
			config.MinVersion = tls.VersionTLS12
			config.NextProtos = []string{"http/1.1"}
		}},
	})
}
