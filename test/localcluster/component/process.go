package component

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

// Spec says how to start a component.
type Spec struct {
	// Name names the component in errors and its log file, <LogDir>/<Name>.log.
	Name string
	// Path is the executable.
	Path string
	Args []string
	// Env is added to this process's environment.
	Env []string
}

// Process is a running component.
type Process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error
}

// Start starts the component, its output going to a log file in logDir.
func Start(spec Spec, logDir string) (*Process, error) {
	logPath := filepath.Join(logDir, spec.Name+".log")
	// Appending, so a component started again (the controller after a restart) keeps the log of
	// its earlier run above the new one.
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A process group of its own, so that stopping the component stops nothing else and
	// everything it spawned; and a signal when this process dies, so that a test killed by its
	// timeout leaves no component behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", spec.Name, err)
	}
	p := &Process{name: spec.Name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// Name is the component's name.
func (p *Process) Name() string { return p.name }

// LogPath is the file holding the component's output.
func (p *Process) LogPath() string { return p.logPath }

// Exited is closed when the component has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// CheckRunning reports an error, with the end of the component's log, if it has already exited.
func (p *Process) CheckRunning() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited (%v); the end of its log:\n%s", p.name, p.err, Tail(p.logPath, 2000))
	default:
		return nil
	}
}

// Stop asks the component to exit and kills it if it has not within the grace period.
func (p *Process) Stop(grace time.Duration) error {
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

// Kill kills the component and everything it spawned at once, without a chance to clean up,
// and waits until it has exited.
func (p *Process) Kill() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s had already exited (%v)", p.name, p.err)
	default:
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("killing %s: %w", p.name, err)
	}
	<-p.exited
	return nil
}

// Signal sends sig to the component and everything it spawned, e.g. SIGSTOP and SIGCONT to
// freeze it for a while.
func (p *Process) Signal(sig syscall.Signal) error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s had already exited (%v)", p.name, p.err)
	default:
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil {
		return fmt.Errorf("signalling %s: %w", p.name, err)
	}
	return nil
}

// Tail returns the last maxBytes of a file, or why it could not be read.
func Tail(path string, maxBytes int64) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if int64(len(data)) > maxBytes {
		data = data[int64(len(data))-maxBytes:]
	}
	return string(data)
}

// StartAll starts the components in order and checks that none exits at once: a component with
// a bad flag or no access dies within moments, and is better reported here than as pods that are
// never scheduled. On error it stops what it started.
func StartAll(logDir string, specs ...Spec) ([]*Process, error) {
	var started []*Process
	stopStarted := func(err error) ([]*Process, error) {
		return nil, errors.Join(err, StopAll(started, 5*time.Second))
	}
	for _, spec := range specs {
		p, err := Start(spec, logDir)
		if err != nil {
			return stopStarted(err)
		}
		started = append(started, p)
	}
	time.Sleep(300 * time.Millisecond)
	for _, p := range started {
		if err := p.CheckRunning(); err != nil {
			return stopStarted(err)
		}
	}
	return started, nil
}

// StopAll stops the components in the reverse of their start order.
func StopAll(processes []*Process, grace time.Duration) error {
	var errs []error
	for i := len(processes) - 1; i >= 0; i-- {
		errs = append(errs, processes[i].Stop(grace))
	}
	return errors.Join(errs...)
}
