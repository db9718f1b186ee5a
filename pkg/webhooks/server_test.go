package webhooks_test

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linode/karpenter-provider-linode/pkg/webhooks"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/conversion"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/node"
)

// TestAnOversizedBodyIsRefusedUnread sends the webhook server, as any pod that reaches its port
// could, request bodies far larger than any the apiserver sends. One whose declared length is over
// the limit is answered before a byte of it is sent; one of undeclared length is answered once
// the limit is read, while the sender is still sending.
func TestAnOversizedBodyIsRefusedUnread(t *testing.T) {
	address := serve(t)
	for _, path := range []string{conversion.Path, node.Path} {
		t.Run("declared length, "+path, func(t *testing.T) {
			conn := dial(t, address)
			// The headers alone: a server that reads the body waits for it until the deadline.
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, 1<<30)
			response, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer to a request whose 1 GiB body is not sent: %v", err)
			}
			if response.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("status %d, want %d", response.StatusCode, http.StatusRequestEntityTooLarge)
			}
		})
	}
	t.Run("undeclared length, "+conversion.Path, func(t *testing.T) {
		conn := dial(t, address)
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", conversion.Path)
		// A ConversionReview whose uid never ends, 1 MiB a chunk, up to 256 MiB.
		const chunk, most = 1 << 20, 256 << 20
		var sent atomic.Int64
		go func() {
			first := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"`
			fmt.Fprintf(conn, "%x\r\n%s\r\n", len(first), first)
			filler := strings.Repeat("a", chunk)
			for sent.Load() < most {
				if _, err := fmt.Fprintf(conn, "%x\r\n%s\r\n", chunk, filler); err != nil {
					return
				}
				sent.Add(chunk)
			}
			fmt.Fprint(conn, "0\r\n\r\n")
		}()
		response, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		if answeredAt := sent.Load(); answeredAt >= most {
			t.Errorf("answered (%d) only once all %d MiB were sent", response.StatusCode, most>>20)
		}
		if response.StatusCode < 400 {
			t.Errorf("status %d, want the request refused", response.StatusCode)
		}
	})
}

// serve starts the webhook server with the conversion and Node webhooks on a free port, and
// returns its address. The Node webhook has no cache to read: no request in this test gets that
// far.
func serve(t *testing.T) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	listener.Close()
	certificate := selfSigned(t)
	server := webhooks.NewServer("127.0.0.1", port, func(config *tls.Config) {
		config.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &certificate, nil }
	})
	if err := conversion.Register(server); err != nil {
		t.Fatal(err)
	}
	node.NewWebhook(nil).Register(server)
	ctx := t.Context()
	done := make(chan error, 1)
	go func() { done <- server.Start(ctx) }()
	t.Cleanup(func() {
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	address := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if conn, err := tls.Dial("tcp", address, &tls.Config{InsecureSkipVerify: true}); err == nil { //nolint:gosec // Whether it listens is the question.
			conn.Close()
			return address
		}
		if time.Now().After(deadline) {
			t.Fatal("the webhook server does not listen")
		}
	}
}

// dial opens a TLS connection to the server that answers within 10 s or not at all.
func dial(t *testing.T, address string) *tls.Conn {
	t.Helper()
	conn, err := tls.Dial("tcp", address, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // The server's identity is not what is tested.
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return conn
}

func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
