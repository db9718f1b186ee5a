package environment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// process is a control-plane component started next to the apiserver, its output kept in a log
// file so that a failing test can show what the component said.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error
}

func startProcess(binDir, logDir, name string, args ...string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A process group of its own, so that stopping the test stops the component and nothing it spawned.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// checkRunning reports an error, with the end of the component's log, if it has already exited.
func (p *process) checkRunning() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited (%v); its log:\n%s", p.name, p.err, tail(p.logPath, 2000))
	default:
		return nil
	}
}

// stop asks the component to exit and kills it if it has not within the grace period.
func (p *process) stop(grace time.Duration) error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	select {
	case <-p.exited:
		return nil
	case <-ctx.Done():
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
		return errors.New(p.name + " did not stop in time and was killed")
	}
}

func tail(path string, maxBytes int64) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if int64(len(data)) > maxBytes {
		data = data[int64(len(data))-maxBytes:]
	}
	return string(data)
}
