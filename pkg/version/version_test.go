package version

import (
	"strings"
	"testing"
)

func TestATaggedModuleVersionIsAReleaseAndAPseudoVersionIsNot(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.2.0":                               true,
		"v0.3.0-rc.1":                          true,
		"(devel)":                              false,
		"":                                     false,
		"v0.0.0-20261207124951-1d323a8f0c2b":   false,
		"v0.2.1-0.20261207124951-1d323a8f0c2b": false,
	} {
		if got := isRelease(v); got != want {
			t.Errorf("isRelease(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestTheStampedVersionIsWhatTheBinaryReports(t *testing.T) {
	defer func(was string) { version = was }(version)
	version = "0.2.0"
	if got := Version(); got != "0.2.0" {
		t.Errorf("Version() = %q, want the stamped 0.2.0", got)
	}
	if got := String("karpenter-linode"); !strings.HasPrefix(got, "karpenter-linode 0.2.0 (commit ") {
		t.Errorf("String = %q, want it to start with the program and the version", got)
	}
}

func TestAnUnstampedTestBinaryIsNotARelease(t *testing.T) {
	if got := Version(); got != "dev" {
		t.Errorf("Version() = %q, want dev for a build from a work tree", got)
	}
}
