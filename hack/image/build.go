package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's contract with the chart: the chart's securityContext runs as this user, its
// Deployment starts the controller by the entrypoint and instance mode's node identity
// component by nodeIdentityPath.
const (
	user             = "65532:65532"
	entrypoint       = "/controller"
	nodeIdentityPath = "/node-identity"
	sourceURL        = "https://github.com/linode/karpenter-provider-linode"
)

// binaries are the files of each platform's directory under -bin that the image holds, by path
// in the image.
var binaries = map[string]string{"controller": entrypoint, "node-identity": nodeIdentityPath}

func build(args []string) error {
	fs := newFlags("build")
	version := fs.String("version", "", "the release version the binaries were stamped with, e.g. 0.2.0 (required)")
	binDir := fs.String("bin", "dist/bin", "directory with one os_arch directory of binaries per platform")
	out := fs.String("out", "dist/image", "the OCI layout to write (replaced)")
	sbomPath := fs.String("sbom", "dist/sbom.spdx.json", "the SPDX SBOM to write")
	push := fs.String("push", "", "push the image index to this reference (REPO:TAG) too")
	epoch := fs.Int64("source-date-epoch", sourceDateEpoch(), "Unix time the image's files and config are dated (SOURCE_DATE_EPOCH), so that a rebuild of the same commit is the same image")
	var targets platforms
	fs.Var(&targets, "platforms", "os/arch,... to build (default linux/amd64,linux/arm64)")
	_ = fs.Parse(args)
	if *version == "" {
		return errors.New("build: -version is required")
	}
	if len(targets) == 0 {
		targets = platforms{"linux/amd64", "linux/arm64"}
	}
	created := time.Unix(*epoch, 0).UTC()

	index := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, platform := range targets {
		img, err := platformImage(filepath.Join(*binDir, strings.ReplaceAll(platform, "/", "_")), platform, *version, created)
		if err != nil {
			return fmt.Errorf("%s: %w", platform, err)
		}
		os, arch, _ := strings.Cut(platform, "/")
		index = mutate.AppendManifests(index, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: os, Architecture: arch}},
		})
	}
	digest, err := index.Digest()
	if err != nil {
		return err
	}
	if err := writeLayout(*out, index, "v"+*version); err != nil {
		return err
	}
	sbom, err := spdxDocument(filepath.Join(*binDir, strings.ReplaceAll(targets[0], "/", "_"), "controller"), *version, created)
	if err != nil {
		return fmt.Errorf("sbom: %w", err)
	}
	if err := os.WriteFile(*sbomPath, sbom, 0o644); err != nil {
		return err
	}
	fmt.Printf("image index %s (%s) in %s, SBOM in %s\n", digest, strings.Join(targets, ", "), *out, *sbomPath)
	if *push == "" {
		return nil
	}
	ref, err := name.ParseReference(*push)
	if err != nil {
		return err
	}
	if err := remote.WriteIndex(ref, index, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	fmt.Printf("pushed %s@%s\n", ref.Context(), digest)
	// The signing step names the image by digest: a tag can move between the push and the signature.
	return os.WriteFile(*out+".digest", []byte(ref.Context().String()+"@"+digest.String()+"\n"), 0o644)
}

// sourceDateEpoch is SOURCE_DATE_EPOCH, or 0 (1970) when unset: never the build's own time.
func sourceDateEpoch() int64 {
	epoch, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64)
	if err != nil {
		return 0
	}
	return epoch
}

// platformImage is one platform's image: a single layer with the binaries and the files a
// non-root static program expects (/etc/passwd naming its user, a writable /tmp).
func platformImage(dir, platform, version string, created time.Time) (v1.Image, error) {
	layer, err := filesystemLayer(dir, created)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), layer)
	if err != nil {
		return nil, err
	}
	config, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	config = config.DeepCopy()
	config.OS, config.Architecture, _ = strings.Cut(platform, "/")
	config.Created = v1.Time{Time: created}
	config.Config = v1.Config{
		User:       user,
		Entrypoint: []string{entrypoint},
		WorkingDir: "/",
		Env:        []string{"PATH=/"},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "karpenter-provider-linode",
			"org.opencontainers.image.version":  version,
			"org.opencontainers.image.source":   sourceURL,
			"org.opencontainers.image.licenses": "Apache-2.0",
		},
	}
	return mutate.ConfigFile(img, config)
}

func filesystemLayer(dir string, created time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	entry := func(header *tar.Header, content []byte) error {
		header.ModTime, header.Uid, header.Gid, header.Format = created, 0, 0, tar.FormatPAX
		header.Size = int64(len(content))
		if err := tw.WriteHeader(header); err != nil {
			return err
		}
		_, err := tw.Write(content)
		return err
	}
	for _, d := range []struct {
		name string
		mode int64
	}{{"etc/", 0o755}, {"tmp/", 0o1777}} {
		if err := entry(&tar.Header{Typeflag: tar.TypeDir, Name: d.name, Mode: d.mode}, nil); err != nil {
			return nil, err
		}
	}
	// In a fixed order, as every entry: the same binaries make the same layer.
	for _, f := range []struct{ name, content string }{
		{"etc/group", "root:x:0:\nnonroot:x:65532:\n"},
		{"etc/passwd", "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"},
	} {
		if err := entry(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644}, []byte(f.content)); err != nil {
			return nil, err
		}
	}
	for _, file := range []string{"controller", "node-identity"} {
		content, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		if err := entry(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(binaries[file], "/"), Mode: 0o755}, content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	content := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(content)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching) // compressed once, not once per reader of it
}

// writeLayout replaces dir with an OCI layout whose index.json names the image index by tag.
func writeLayout(dir string, index v1.ImageIndex, tag string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	path, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return path.AppendIndex(index, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag}))
}
