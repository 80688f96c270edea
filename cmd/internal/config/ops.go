package config

import (
	"fmt"
	"path/filepath"
)

// ControlSection is the daemon's control socket: `quotesync sync-now`
// connects to it to ask the running daemon for a pass at once.
type ControlSection struct {
	// Socket is the unix socket's path; "" means DefaultControlSocket
	// (the unit's RuntimeDirectory=), "off" none (SIGUSR1 still asks for
	// a pass).
	Socket string `yaml:"socket"`
}

const (
	// DefaultControlSocket is control.socket's default: systemd creates
	// /run/quotesync for the service (RuntimeDirectory=quotesync).
	DefaultControlSocket = "/run/quotesync/control.sock"
	// ControlOff is the control.socket value that disables the socket.
	ControlOff = "off"
	// maxSocketPath is the longest path a unix socket address holds
	// (sun_path is 108 bytes with its NUL).
	maxSocketPath = 107
)

// SocketFor returns the socket's path ("" when off) for site of the
// template unit ("" for none; the default is then SiteControlSocket's),
// and whether it is the default rather than a path of the file.
func (c ControlSection) SocketFor(site string) (path string, isDefault bool) {
	switch c.Socket {
	case "":
		return defaultSocket(site), true
	case ControlOff:
		return "", false
	}
	return c.Socket, false
}

// defaultSocket is control.socket's default: the site's when the file is
// read for one.
func defaultSocket(site string) string {
	if site != "" {
		return SiteControlSocket(site)
	}
	return DefaultControlSocket
}

// buildOps takes the operators' keys: the control section, and
// shop.single_writer.
func (c *File) buildOps(s *Settings) error {
	s.SingleWriter = c.Shop.SingleWriter
	s.Control = c.Control
	s.Site = c.site
	p := c.Control.Socket
	if p == "" || p == ControlOff {
		return nil
	}
	if !filepath.IsAbs(p) {
		return fmt.Errorf("control.socket: %q must be an absolute path such as %s, or off", p, DefaultControlSocket)
	}
	if len(p) > maxSocketPath {
		return fmt.Errorf("control.socket: %q is %d bytes, longer than a unix socket path may be (%d); choose a shorter path", p, len(p), maxSocketPath)
	}
	return nil
}
