package embedded

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// PortInUseError reports a port that another process already holds. We check
// before starting because the server library treats a failed bind as fatal and
// exits the whole process.
type PortInUseError struct {
	What string // "frontend" or "UI"
	Host string
	Port int
	Err  error
}

func (e *PortInUseError) Error() string {
	hint := "pass --temporal-port or --temporal-address"
	if e.What == "UI" {
		hint = "pass --ui-port (0 turns the UI off)"
	}
	return fmt.Sprintf("port %d on %s is in use (another Temporal dev server?); %s", e.Port, e.Host, hint)
}

func (e *PortInUseError) Unwrap() error { return e.Err }

// ports are the listeners Start needs, held open until the server is about to
// bind them, so that ports picked for "any" cannot collide with each other.
type ports struct {
	frontend, history, matching, worker, ui int
	held                                    []net.Listener
}

// reservePorts checks the fixed ports and picks the free ones. The caller must
// call release before the server binds.
func reservePorts(host string, frontend, ui int) (*ports, error) {
	p := &ports{}
	var err error
	if p.frontend, err = p.take(host, "frontend", frontend); err != nil {
		p.release()
		return nil, err
	}
	if ui != 0 {
		if p.ui, err = p.take(host, "UI", ui); err != nil {
			p.release()
			return nil, err
		}
	}
	// Internal services: with static hosts these are the only other listeners
	// (no membership ports, frontend HTTP API off).
	internal := []*int{&p.history, &p.matching, &p.worker}
	for _, dst := range internal {
		if *dst, err = p.take(host, "internal", AnyPort); err != nil {
			p.release()
			return nil, err
		}
	}
	return p, nil
}

func (p *ports) take(host, what string, port int) (int, error) {
	want := port
	if port == AnyPort {
		want = 0
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(want)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return 0, &PortInUseError{What: what, Host: host, Port: port, Err: err}
		}
		return 0, fmt.Errorf("temporal: cannot listen on %s port %d on %s: %w", what, port, host, err)
	}
	p.held = append(p.held, l)
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (p *ports) release() {
	for _, l := range p.held {
		_ = l.Close()
	}
	p.held = nil
}
