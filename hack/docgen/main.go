// Command docgen writes the reference pages whose source is the code, so that they cannot drift
// from it: `make generate` runs it and `make verify` fails when what it writes differs from what is
// committed.
//
//   - docs/reference/settings.md: every setting of the controller, from the flags the provider's
//     options and Karpenter core's register (flag, environment variable, default, what it does),
//     with the Helm value that sets it, read from the chart's Deployment template.
//   - docs/reference/metrics.md: every Prometheus metric the provider registers, read from the
//     operatorpkg metric constructors in pkg/ (name, type, labels with their values, help).
//
// Usage: go run ./hack/docgen [-out DIR] (DIR defaults to docs/reference).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	out := flag.String("out", filepath.Join("docs", "reference"), "directory the reference pages are written to")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintf(os.Stderr, "docgen: %v\n", err)
		os.Exit(1)
	}
}

func run(out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	settings, err := settingsPage(filepath.Join("charts", "karpenter", "templates", "deployment.yaml"))
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	metrics, err := metricsPage("./pkg/...")
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	for name, page := range map[string]string{"settings.md": settings, "metrics.md": metrics} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(page), 0o644); err != nil {
			return err
		}
	}
	return nil
}
