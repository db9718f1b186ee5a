package certificate

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Keys of the certificate Secret. tls.crt and tls.key make it a kubernetes.io/tls Secret.
const (
	KeyCABundle    = "ca.crt"
	KeyCAKey       = "ca.key"
	KeyServingCert = "tls.crt"
	KeyServingKey  = "tls.key"
)

// bundle is the contents of the certificate Secret, parsed.
type bundle struct {
	// caCerts are the CAs the caBundle trusts; the first one signs the serving certificate.
	caCerts []*x509.Certificate
	caKey   *ecdsa.PrivateKey
	serving *x509.Certificate
	raw     map[string][]byte
}

// clockSkew backdates certificates so that a peer whose clock runs a little behind accepts them.
const clockSkew = 5 * time.Minute

// parseBundle reads the Secret's data; any missing or malformed part is an error.
func parseBundle(data map[string][]byte) (*bundle, error) {
	caCerts, err := parseCertificates(data[KeyCABundle])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KeyCABundle, err)
	}
	caKey, err := parseKey(data[KeyCAKey])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KeyCAKey, err)
	}
	servingCerts, err := parseCertificates(data[KeyServingCert])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KeyServingCert, err)
	}
	if _, err := tls.X509KeyPair(data[KeyServingCert], data[KeyServingKey]); err != nil {
		return nil, fmt.Errorf("%s and %s: %w", KeyServingCert, KeyServingKey, err)
	}
	if !caKey.PublicKey.Equal(caCerts[0].PublicKey) {
		return nil, fmt.Errorf("%s does not belong to the first certificate of %s", KeyCAKey, KeyCABundle)
	}
	return &bundle{caCerts: caCerts, caKey: caKey, serving: servingCerts[0], raw: data}, nil
}

// servesFor reports whether the bundle's serving certificate can be served until renewAt for
// hosts, and is trusted by its own CA bundle.
func (b *bundle) servesFor(hosts []string, now, renewAt time.Time) error {
	if now.Before(b.serving.NotBefore) || !renewAt.Before(b.serving.NotAfter) {
		return fmt.Errorf("the serving certificate is valid from %s to %s and is renewed %s before it expires", b.serving.NotBefore.Format(time.RFC3339), b.serving.NotAfter.Format(time.RFC3339), b.serving.NotAfter.Sub(renewAt).Round(time.Second))
	}
	roots := x509.NewCertPool()
	for _, ca := range b.caCerts {
		roots.AddCert(ca)
	}
	for _, host := range hosts {
		if _, err := b.serving.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, CurrentTime: now}); err != nil {
			return fmt.Errorf("the serving certificate does not serve %s: %w", host, err)
		}
	}
	return nil
}

// issue returns a new bundle serving hosts. It signs with the previous bundle's CA while that CA
// outlives the new serving certificate, and otherwise with a new CA, keeping the previous CA in the
// trust bundle while it is still valid.
func issue(previous *bundle, hosts []string, now time.Time, caValidity, servingValidity time.Duration) (*bundle, error) {
	notAfter := now.Add(servingValidity)
	var caCert *x509.Certificate
	var caKey *ecdsa.PrivateKey
	var trusted []*x509.Certificate
	if previous != nil && previous.caCerts[0].NotAfter.After(notAfter) {
		caCert, caKey = previous.caCerts[0], previous.caKey
	} else {
		var err error
		if caCert, caKey, err = newCA(now, caValidity); err != nil {
			return nil, err
		}
		trusted = append(trusted, caCert)
	}
	if previous != nil {
		for _, ca := range previous.caCerts {
			if ca.NotAfter.After(now) {
				trusted = append(trusted, ca)
			}
		}
	}
	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the serving key: %w", err)
	}
	template := &x509.Certificate{
		SerialNumber: newSerial(),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, host := range hosts {
		if ip := net.ParseIP(host); ip != nil {
			template.IPAddresses = append(template.IPAddresses, ip)
		} else {
			template.DNSNames = append(template.DNSNames, host)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, template, caCert, &servingKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("signing the serving certificate: %w", err)
	}
	serving, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	var caPEM bytes.Buffer
	for _, ca := range trusted {
		caPEM.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}))
	}
	caKeyPEM, err := encodeKey(caKey)
	if err != nil {
		return nil, err
	}
	servingKeyPEM, err := encodeKey(servingKey)
	if err != nil {
		return nil, err
	}
	return &bundle{caCerts: trusted, caKey: caKey, serving: serving, raw: map[string][]byte{
		KeyCABundle:    caPEM.Bytes(),
		KeyCAKey:       caKeyPEM,
		KeyServingCert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyServingKey:  servingKeyPEM,
	}}, nil
}

func newCA(now time.Time, validity time.Duration) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the CA key: %w", err)
	}
	template := &x509.Certificate{
		SerialNumber:          newSerial(),
		Subject:               pkix.Name{CommonName: "karpenter-provider-linode webhook CA", Organization: []string{"karpenter.k8s.linode"}},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

func newSerial() *big.Int {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		// crypto/rand does not fail on the platforms Go supports.
		panic(err)
	}
	return serial
}

func parseCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM certificate")
	}
	return certs, nil
}

func parseKey(data []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM key")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	ecKey, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("a %T key, not ECDSA", key)
	}
	return ecKey, nil
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
