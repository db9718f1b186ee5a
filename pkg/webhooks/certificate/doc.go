// Package certificate issues and rotates the serving certificate of the provider's webhook server
// itself, so that installing the provider needs no cert-manager.
//
// Every replica runs the manager: the certificate lives in one Secret that the first replica
// creates and the others adopt, so all replicas serve the same certificate, signed by the one CA
// that the caBundles trust: the Node webhook's MutatingWebhookConfiguration's, when that webhook is
// on, and the conversion webhook's of the LinodeNodeClass CRD. A replica that finds the certificate
// malformed, issued for other names or close to expiry issues a new one; the Secret's resource
// version settles which replica's certificate wins.
//
// The CA outlives many serving certificates, so routine rotation leaves the caBundle unchanged.
// When the CA itself is renewed, the bundle carries the old CA next to the new one until the old
// one expires, so that a replica still serving the previous certificate stays trusted.
package certificate
