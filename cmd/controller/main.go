// Command controller is Karpenter for Linode: Karpenter core's controllers with the Linode
// cloud provider. It is configured by environment variables (or the equivalent flags, see
// --help), which the Helm chart in charts/karpenter sets. --version prints the release version
// and exits.
//
// Start-up happens in this order, so that every mistake a user can make is reported in words:
//  1. the settings are parsed and validated; each problem is one line on stderr, exit status 2;
//  2. the settings are checked against the Linode API (cluster, region) once: an unknown cluster
//     or region exits with status 1;
//  3. Karpenter core's operator starts with the webhooks, ready once they serve: leader
//     election, probes, metrics. An API outage or a refused token is waited out meanwhile, and
//     logged; the controllers that drive Linode start once the API answers.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	// The image has no operating system files: the Linode API's certificate is verified against
	// the Mozilla roots built into the binary when the system has none.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/linode/karpenter-provider-linode/pkg/operator"
	"github.com/linode/karpenter-provider-linode/pkg/version"
)

func main() {
	os.Exit(run(context.Background()))
}

func run(ctx context.Context) int {
	if slices.Contains(os.Args[1:], "--version") {
		fmt.Println(version.String("karpenter-provider-linode"))
		return 0
	}
	ctx, err := operator.ParseSettings(ctx, os.Args[1:], os.Stdout)
	if errors.Is(err, operator.ErrHelp) {
		return 0
	}
	var settingsErr *operator.SettingsError
	if errors.As(err, &settingsErr) {
		for _, problem := range settingsErr.Problems {
			fmt.Fprintln(os.Stderr, "karpenter: "+problem)
		}
		return 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "karpenter: "+err.Error())
		return 2
	}
	if err := operator.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "karpenter: "+err.Error())
		return 1
	}
	return 0
}
