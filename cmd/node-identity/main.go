// Command node-identity is instance mode's node identity component: with a ServiceAccount of its
// own, it keeps the key of the bootstrap tokens, issues each NodeClaim's token, and approves the
// node client certificate a token asks for only for the node of its NodeClaim, while no Node of
// that name exists (package nodeidentity). The controller's ServiceAccount holds none of this.
// It is configured by environment variables (or flags of the same name, see --help), which the
// Helm chart sets; --version prints the release version.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/linode/karpenter-provider-linode/pkg/nodeidentity"
	"github.com/linode/karpenter-provider-linode/pkg/version"
)

func main() {
	os.Exit(run())
}

func run() int {
	if slices.Contains(os.Args[1:], "--version") {
		fmt.Println(version.String("node-identity"))
		return 0
	}
	opts, err := nodeidentity.ParseOptions(os.Args[1:], os.Stderr)
	if errors.Is(err, nodeidentity.ErrHelp) {
		return 0
	}
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintln(os.Stderr, "node-identity: "+line)
		}
		return 2
	}
	config, err := ctrl.GetConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "node-identity: "+err.Error())
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := nodeidentity.Run(ctx, config, opts); err != nil {
		fmt.Fprintln(os.Stderr, "node-identity: "+err.Error())
		return 1
	}
	return 0
}
