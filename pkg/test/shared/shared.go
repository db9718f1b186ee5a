// Package shared finds the project's reference data, kept beside the repository in ../shared
// rather than in it: recordings of the real Linode API and its OpenAPI description (linode-api),
// what the alpha provider published (seed-compat), and cloud-init's schema (cloud-init).
// CONTRIBUTING.md says where each comes from. Tests read the files where they are, never copies.
//
// A test that needs one calls Require: on a clone without ../shared it is skipped with a line
// naming what is missing, except under CI=true, where a missing directory fails the test, so that
// CI never passes by skipping.
package shared

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/modfile"
)

// The directories of ../shared.
const (
	// LinodeAPI holds recordings of the real Linode API (recordings/) and its OpenAPI description
	// (openapi.yaml).
	LinodeAPI = "linode-api"
	// SeedCompat holds what the alpha provider published: its CRD, examples and chart values.
	SeedCompat = "seed-compat"
	// CloudInit holds cloud-init's JSON schema of #cloud-config.
	CloudInit = "cloud-init"
)

var what = map[string]string{
	LinodeAPI:  "recordings of the real Linode API and its OpenAPI description",
	SeedCompat: "what the alpha provider published",
	CloudInit:  "cloud-init's schema of #cloud-config",
}

// Dir is the path of the named directory of ../shared, whether or not it exists; empty when the
// working directory is not inside the repository.
func Dir(name string) string {
	root, err := RepositoryRoot()
	if err != nil {
		return ""
	}
	return filepath.Join(root, "..", "shared", name)
}

// ModulePath is this repository's Go module.
const ModulePath = "github.com/linode/karpenter-provider-linode"

// RepositoryRoot is the directory of this repository: the first directory up from the working
// directory whose go.mod is this module's (go test runs in the package's directory, and
// `go run ./test/cmd/...` in the repository's). It is found from the working directory rather
// than from a source file's compiled-in path, which -trimpath, the flag tests and releases are
// built with so that one compile serves both, leaves relative.
func RepositoryRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if goMod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modfile.ModulePath(goMod) == ModulePath {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no directory above %s holds the go.mod of %s: run this inside the repository", wd, ModulePath)
		}
	}
}

// RepositoryFile is the path of a file of this repository by its path from the root.
func RepositoryFile(name string) (string, error) {
	root, err := RepositoryRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, name), nil
}

// T is what Require needs of a test: testing.TB, or Ginkgo's GinkgoT().
type T interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Require returns the path of the named directory of ../shared; when it is missing, it skips the
// test, or fails it under CI=true.
func Require(t T, name string) string {
	t.Helper()
	dir := Dir(name)
	if _, err := os.Stat(dir); dir != "" && err == nil {
		return dir
	}
	message := "needs ../shared/%s (%s) beside the repository, which this checkout lacks: CONTRIBUTING.md says how to get it"
	if os.Getenv("CI") == "true" {
		t.Fatalf(message+"; under CI=true that is a failure, not a skip", name, what[name])
		return ""
	}
	t.Skipf(message, name, what[name])
	return ""
}
