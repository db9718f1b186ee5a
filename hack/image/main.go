// Command image builds the controller's container image without a container engine, from
// binaries `make image` has built: one image per platform (the controller and the node identity
// component, static, on no base image), an OCI image index of them in an OCI layout, and an SPDX
// SBOM of the Go modules built into the controller, read from the binary's build info. It pushes
// the index when given a reference, and checks a built layout as CI does.
//
//	image build -version 0.2.0 -bin dist/bin -out dist/image -sbom dist/sbom.spdx.json [-push REPO:TAG]
//	image check -version 0.2.0 -dir dist/image
//
// Pushing authenticates as `docker login`, `crane auth login` or `cosign login` left it
// (~/.docker/config.json): no daemon is involved.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: image build|check [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = build(os.Args[2:])
	case "check":
		err = check(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want build or check", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image: "+err.Error())
		os.Exit(1)
	}
}

// platforms is a comma-separated os/arch list flag.
type platforms []string

func (p *platforms) String() string { return strings.Join(*p, ",") }
func (p *platforms) Set(v string) error {
	for _, platform := range strings.Split(v, ",") {
		if _, _, ok := strings.Cut(platform, "/"); !ok {
			return fmt.Errorf("%q: want os/arch", platform)
		}
		*p = append(*p, platform)
	}
	return nil
}

func newFlags(name string) *flag.FlagSet {
	return flag.NewFlagSet(name, flag.ExitOnError)
}
