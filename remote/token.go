package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// TokenSource gives the bearer token for each attempt. Implementations are
// safe for concurrent use, and their errors never contain the token.
//
// An error that matches ErrTemporary (or is a context error) makes the
// attempt a temporary failure, retried like a network error; any other
// error is ErrUnauthorized (a missing file, an unset variable, a refused
// client secret): retrying will not fix it.
type TokenSource interface {
	// Token returns the current token.
	Token(ctx context.Context) (string, error)
	// Invalidate says a 401 was seen: the next Token call must not return
	// the cached value (a file is read again, an OAuth2 token fetched anew).
	Invalidate()
}

// tokenFunc is a TokenSource that caches nothing: Invalidate does nothing.
type tokenFunc func(context.Context) (string, error)

func (f tokenFunc) Token(ctx context.Context) (string, error) { return f(ctx) }

func (tokenFunc) Invalidate() {}

// StaticToken returns a TokenSource that always gives token; an empty one
// is an error at the first call.
func StaticToken(token string) TokenSource {
	return tokenFunc(func(context.Context) (string, error) {
		if token == "" {
			return "", errors.New("static token is empty")
		}
		return token, nil
	})
}

// EnvToken returns a TokenSource that reads the environment variable name
// through getenv (nil: os.Getenv) at every call, trimmed; unset or empty
// is an error.
func EnvToken(name string, getenv func(string) string) TokenSource {
	if getenv == nil {
		getenv = os.Getenv
	}
	return tokenFunc(func(context.Context) (string, error) {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("read token from environment variable %s: unset or empty", name)
	})
}

const maxTokenFile = 64 << 10

// FileToken returns a TokenSource that reads the token from the file at
// path (systemd's LoadCredential=), trimmed; again when its modification
// time or size changes, and after Invalidate. An empty file is an error.
func FileToken(path string) TokenSource { return &fileToken{path: path} }

type fileToken struct {
	path string

	mu      sync.Mutex
	token   string // "" after Invalidate
	modTime time.Time
	size    int64
}

func (f *fileToken) Token(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fi, err := os.Stat(f.path)
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	if f.token != "" && fi.ModTime().Equal(f.modTime) && fi.Size() == f.size {
		return f.token, nil
	}
	tok, err := readTokenFile(f.path)
	if err != nil {
		return "", err
	}
	f.token, f.modTime, f.size = tok, fi.ModTime(), fi.Size()
	return tok, nil
}

func (f *fileToken) Invalidate() {
	f.mu.Lock()
	f.token = ""
	f.mu.Unlock()
}

func readTokenFile(path string) (string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxTokenFile+1))
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	if len(b) > maxTokenFile {
		return "", fmt.Errorf("read token file %s: larger than %d bytes", path, maxTokenFile)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("read token file %s: file is empty", path)
	}
	if strings.ContainsAny(tok, "\r\n") {
		return "", fmt.Errorf("read token file %s: more than one line", path)
	}
	return tok, nil
}
