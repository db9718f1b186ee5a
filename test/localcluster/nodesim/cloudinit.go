package nodesim

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"

	metadata "github.com/linode/go-metadata"
	"sigs.k8s.io/yaml"
)

// bootedSystem is what cloud-init leaves on a Linode after its first boot, as far as the
// kubelet is concerned: the files the user data wrote, and the commands it ran.
type bootedSystem struct {
	files  map[string]string
	runcmd [][]string
}

// runCloudInit does with the user data what cloud-init does on a Linode whose image has the
// cloud-init capability, within what a node's kubelet depends on:
//
//   - a MIME multi-part message is taken apart; a single document is one part;
//   - a part of type text/jinja2, or one starting "## template: jinja", is rendered first, with
//     the instance data cloud-init takes from the Metadata service (v1.instance_id,
//     v1.local_hostname, v1.region); any other Jinja is refused;
//   - cloud-config parts (#cloud-config) are merged in order: write_files and runcmd of a later
//     part replace the earlier ones', unless its merge_how appends lists;
//   - write_files are written (content as is, or base64 with encoding b64), runcmd is kept.
//
// Parts of other types (shell scripts, boothooks) are not simulated.
func runCloudInit(userData string, self *metadata.InstanceData) (*bootedSystem, error) {
	parts, err := userDataParts(userData)
	if err != nil {
		return nil, err
	}
	boot := &bootedSystem{files: map[string]string{}}
	var writeFiles []writeFile
	for i, p := range parts {
		body := p.body
		if p.contentType == "text/jinja2" || strings.HasPrefix(body, jinjaHeader) {
			if body, err = renderJinja(body, self); err != nil {
				return nil, fmt.Errorf("part %d: %w", i+1, err)
			}
		}
		if !strings.HasPrefix(body, "#cloud-config") {
			continue
		}
		var doc cloudConfig
		if err := yaml.Unmarshal([]byte(body), &doc); err != nil {
			return nil, fmt.Errorf("part %d is not a valid cloud-config: %w", i+1, err)
		}
		appendLists := doc.appendsLists()
		if doc.WriteFiles != nil {
			writeFiles = mergeList(writeFiles, doc.WriteFiles, appendLists)
		}
		if doc.RunCmd != nil {
			runcmd, err := commands(doc.RunCmd)
			if err != nil {
				return nil, fmt.Errorf("part %d: %w", i+1, err)
			}
			boot.runcmd = mergeList(boot.runcmd, runcmd, appendLists)
		}
	}
	for _, f := range writeFiles {
		content := f.Content
		if f.Encoding == "b64" || f.Encoding == "base64" {
			decoded, err := base64.StdEncoding.DecodeString(f.Content)
			if err != nil {
				return nil, fmt.Errorf("write_files %s: %w", f.Path, err)
			}
			content = string(decoded)
		}
		boot.files[f.Path] = content
	}
	return boot, nil
}

type userDataPart struct {
	contentType string
	body        string
}

func userDataParts(userData string) ([]userDataPart, error) {
	if !strings.HasPrefix(userData, "MIME-Version:") && !strings.HasPrefix(userData, "Content-Type:") {
		return []userDataPart{{body: userData}}, nil
	}
	msg, err := mail.ReadMessage(strings.NewReader(userData))
	if err != nil {
		return nil, fmt.Errorf("the user data is not a MIME message: %w", err)
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mediaType, "multipart/") {
		return nil, fmt.Errorf("the user data's content type %q is not multipart", msg.Header.Get("Content-Type"))
	}
	var parts []userDataPart
	reader := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := reader.NextPart()
		if errors.Is(err, io.EOF) {
			return parts, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the user data's parts: %w", err)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		contentType, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		parts = append(parts, userDataPart{contentType: contentType, body: string(bytes.TrimLeft(body, "\r\n"))})
	}
}

const jinjaHeader = "## template: jinja"

var jinjaExpression = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// renderJinja renders a template's variables from the instance data.
func renderJinja(body string, self *metadata.InstanceData) (string, error) {
	body = strings.TrimPrefix(strings.TrimPrefix(body, jinjaHeader), "\n")
	if strings.Contains(body, "{%") {
		return "", errors.New("Jinja statements are not simulated")
	}
	variables := map[string]string{
		"v1.instance_id":    strconv.Itoa(self.ID),
		"v1.local_hostname": self.Label,
		"v1.region":         self.Region,
	}
	var unknown []string
	rendered := jinjaExpression.ReplaceAllStringFunc(body, func(expr string) string {
		name := jinjaExpression.FindStringSubmatch(expr)[1]
		value, ok := variables[name]
		if !ok {
			unknown = append(unknown, name)
		}
		return value
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("the template uses instance data cloud-init does not have: %s", strings.Join(unknown, ", "))
	}
	return rendered, nil
}

type cloudConfig struct {
	MergeHow   []merger    `json:"merge_how"`
	WriteFiles []writeFile `json:"write_files"`
	RunCmd     []any       `json:"runcmd"`
}

type merger struct {
	Name     string   `json:"name"`
	Settings []string `json:"settings"`
}

type writeFile struct {
	Path        string `json:"path"`
	Content     string `json:"content"`
	Encoding    string `json:"encoding"`
	Permissions string `json:"permissions"`
}

// appendsLists reports whether the document's lists are appended to the earlier parts' rather
// than replacing them (cloud-init's default).
func (c cloudConfig) appendsLists() bool {
	return slices.ContainsFunc(c.MergeHow, func(m merger) bool { return m.Name == "list" && slices.Contains(m.Settings, "append") })
}

func mergeList[T any](earlier, later []T, appendLater bool) []T {
	if appendLater {
		return append(earlier, later...)
	}
	return later
}

// commands normalizes runcmd entries: a list is an argv, a string runs in sh.
func commands(runcmd []any) ([][]string, error) {
	var out [][]string
	for _, entry := range runcmd {
		switch cmd := entry.(type) {
		case string:
			out = append(out, []string{"sh", "-c", cmd})
		case []any:
			argv := make([]string, 0, len(cmd))
			for _, arg := range cmd {
				argv = append(argv, fmt.Sprint(arg))
			}
			out = append(out, argv)
		default:
			return nil, fmt.Errorf("runcmd entry %v is neither a string nor a list", entry)
		}
	}
	return out, nil
}
