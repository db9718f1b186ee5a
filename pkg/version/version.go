// Package version is the provider's release version, one for the controller, the node identity
// component and the karpenter-linode CLI. The release build stamps it from the VERSION file at the
// repository's root:
//
//	go build -ldflags "-X github.com/linode/karpenter-provider-linode/pkg/version.version=$(cat VERSION)
//	  -X github.com/linode/karpenter-provider-linode/pkg/version.commit=$(git rev-parse --short=12 HEAD)"
//
// (make image, make plan and make release-dry-run do). An unstamped binary reports the module
// version the Go command recorded, which `go install ...@v0.2.0` sets, and otherwise "dev": a
// build from a work tree says it is not a release rather than claim one.
package version

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
)

// version and commit are set at link time with -X; see the package comment. The commit is
// stamped because builds may run with -buildvcs=false, which leaves it out of the build info.
var version, commit string

// modulePath is the provider's Go module, whose version `go install` records.
const modulePath = "github.com/linode/karpenter-provider-linode"

// Version is the release version, e.g. "0.2.0", or "dev" for a build that is not a release.
func Version() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Path == modulePath && isRelease(info.Main.Version) {
		return info.Main.Version[1:]
	}
	return "dev"
}

// pseudoVersion is the end of a version the Go command makes up for an untagged commit: a
// timestamp and a commit hash, e.g. v0.0.0-20261207124951-1d323a8f0c2b.
var pseudoVersion = regexp.MustCompile(`[-.]\d{14}-[0-9a-f]{12}(\+incompatible)?$`)

// isRelease says whether a module version the Go command recorded names a tag: not "(devel)",
// nor a pseudo-version.
func isRelease(v string) bool {
	return strings.HasPrefix(v, "v") && !pseudoVersion.MatchString(v)
}

// String is how a binary names itself and its build, e.g.
// "karpenter-linode 0.2.0 (commit 1d323a8, go1.27.3, linux/amd64)".
func String(program string) string {
	return fmt.Sprintf("%s %s (commit %s, %s, %s/%s)", program, Version(), Commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// Commit is the git commit the binary was built from: the stamped one, else the one the Go
// command recorded (with "-dirty" when the work tree had changes), else "unknown".
func Commit() string {
	if commit != "" {
		return commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var revision, modified string
	for _, setting := range info.Settings {
		switch setting.Key {
		case "vcs.revision":
			revision = setting.Value
		case "vcs.modified":
			modified = setting.Value
		}
	}
	if revision == "" {
		return "unknown"
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if modified == "true" {
		revision += "-dirty"
	}
	return revision
}
