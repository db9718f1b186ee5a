package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// check verifies a layout `image build` wrote as the chart and the release need it: an index of
// the wanted platforms, each image running the controller as the non-root user with both
// binaries in it; and runs the controller of the platform this machine can run, taken out of the
// image's layer, which must answer --version with the build's version.
func check(args []string) error {
	fs := newFlags("check")
	version := fs.String("version", "", "the version the binaries must report (required)")
	dir := fs.String("dir", "dist/image", "the OCI layout to check")
	var want platforms
	fs.Var(&want, "platforms", "os/arch,... the index must hold (default linux/amd64,linux/arm64)")
	_ = fs.Parse(args)
	if *version == "" {
		return errors.New("check: -version is required")
	}
	if len(want) == 0 {
		want = platforms{"linux/amd64", "linux/arm64"}
	}
	root, err := layout.ImageIndexFromPath(*dir)
	if err != nil {
		return err
	}
	rootManifest, err := root.IndexManifest()
	if err != nil {
		return err
	}
	if len(rootManifest.Manifests) != 1 {
		return fmt.Errorf("%s names %d entries, want the one image index", *dir, len(rootManifest.Manifests))
	}
	index, err := root.ImageIndex(rootManifest.Manifests[0].Digest)
	if err != nil {
		return err
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		return err
	}
	var got []string
	ran := false
	var problems []string
	if tag := rootManifest.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; tag != "v"+*version {
		problems = append(problems, fmt.Sprintf("the layout's image is tagged %q, want v%s", tag, *version))
	}
	for _, descriptor := range manifest.Manifests {
		if descriptor.Platform == nil {
			problems = append(problems, fmt.Sprintf("%s has no platform", descriptor.Digest))
			continue
		}
		platform := descriptor.Platform.OS + "/" + descriptor.Platform.Architecture
		got = append(got, platform)
		img, err := index.Image(descriptor.Digest)
		if err != nil {
			return err
		}
		runnable := descriptor.Platform.OS == runtime.GOOS && descriptor.Platform.Architecture == runtime.GOARCH
		for _, problem := range checkImage(img, platform, *version, runnable) {
			problems = append(problems, platform+": "+problem)
		}
		ran = ran || runnable
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		problems = append(problems, fmt.Sprintf("the index holds %v, want %v", got, want))
	}
	if !ran {
		problems = append(problems, fmt.Sprintf("no image is for %s/%s, where the check runs: no binary answered --version", runtime.GOOS, runtime.GOARCH))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	fmt.Printf("%s: %v, user %s, entrypoint %s, --version %s\n", *dir, got, user, entrypoint, *version)
	return nil
}

func checkImage(img v1.Image, platform, version string, run bool) []string {
	var problems []string
	config, err := img.ConfigFile()
	if err != nil {
		return []string{err.Error()}
	}
	if p := config.OS + "/" + config.Architecture; p != platform {
		problems = append(problems, fmt.Sprintf("the config is for %s", p))
	}
	if config.Config.User != user {
		problems = append(problems, fmt.Sprintf("runs as user %q, want %q (non-root, as the chart's securityContext)", config.Config.User, user))
	}
	if !slices.Equal(config.Config.Entrypoint, []string{entrypoint}) {
		problems = append(problems, fmt.Sprintf("entrypoint %q, want [%s]", config.Config.Entrypoint, entrypoint))
	}
	tmp, err := os.MkdirTemp("", "image-check-")
	if err != nil {
		return append(problems, err.Error())
	}
	defer os.RemoveAll(tmp)
	extracted, err := extract(img, tmp, entrypoint, nodeIdentityPath)
	if err != nil {
		return append(problems, err.Error())
	}
	for _, path := range []string{entrypoint, nodeIdentityPath} {
		if _, ok := extracted[path]; !ok {
			problems = append(problems, fmt.Sprintf("no executable %s in the image", path))
		}
	}
	if !run {
		return problems
	}
	for _, path := range []string{entrypoint, nodeIdentityPath} {
		file, ok := extracted[path]
		if !ok {
			continue
		}
		out, err := exec.Command(file, "--version").CombinedOutput()
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s --version: %v: %s", path, err, out))
			continue
		}
		if !strings.Contains(string(out), " "+version+" ") {
			problems = append(problems, fmt.Sprintf("%s --version says %q, want version %s", path, strings.TrimSpace(string(out)), version))
		}
	}
	return problems
}

// extract writes the image's files at paths into dir, as the container would see them (its
// layers flattened), and returns where each executable one went.
func extract(img v1.Image, dir string, paths ...string) (map[string]string, error) {
	reader := mutate.Extract(img)
	defer reader.Close()
	tr := tar.NewReader(reader)
	found := map[string]string{}
	for {
		header, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return found, nil
		}
		if err != nil {
			return nil, err
		}
		path := "/" + strings.TrimPrefix(filepath.Clean(header.Name), "/")
		if !slices.Contains(paths, path) || header.Typeflag != tar.TypeReg || header.Mode&0o111 == 0 {
			continue
		}
		target := filepath.Join(dir, filepath.Base(path))
		file, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		if err != nil {
			return nil, err
		}
		_, err = io.Copy(file, tr)
		if closeErr := file.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			return nil, err
		}
		found[path] = target
	}
}
