package localcluster

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
)

// RecentControllerErrors returns the last n distinct errors in the controller's log, oldest
// first, as "message: error": the lines worth reading when a step did not happen.
func (c *Cluster) RecentControllerErrors(n int) []string {
	f, err := os.Open(c.ControllerLog())
	if err != nil {
		return []string{err.Error()}
	}
	defer f.Close()
	var recent []string
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for scanner.Scan() {
		var entry struct {
			Level   string `json:"level"`
			Message string `json:"message"`
			Error   string `json:"error"`
		}
		if json.Unmarshal(scanner.Bytes(), &entry) != nil || entry.Level != "ERROR" {
			continue
		}
		line := entry.Message
		if entry.Error != "" {
			line += ": " + entry.Error
		}
		// A repeated error moves to the end rather than crowding out the others.
		recent = append(slices.DeleteFunc(recent, func(s string) bool { return s == line }), line)
		if len(recent) > n {
			recent = recent[1:]
		}
	}
	return recent
}
