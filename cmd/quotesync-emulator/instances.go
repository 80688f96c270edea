package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

// emulatorInstance is one emulator the program serves: the single-instance
// flags' or one --instance spec's.
type emulatorInstance struct {
	name         string // "" for the single-instance flags
	listen       string
	mode         string
	clientID     string
	tokenTTL     time.Duration
	seedRequests int
	state        string
	token        string // resolved; never printed
	emu          *emulator.Emulator
}

// label names the instance in the output: "quotesync-emulator [NAME]".
func (in emulatorInstance) label() string { return strings.TrimSpace("quotesync-emulator " + in.name) }

var (
	// instanceKeys are the keys of an --instance spec, in the help's order.
	instanceKeys = []string{"name", "listen", "mode", "token-file", "token-env", "client-id", "token-ttl", "seed-requests", "state"}
	// instanceName is what a name may hold: it labels the instance's output.
	instanceName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// instancesFromSpecs parses every --instance spec, refuses the
// single-instance flags beside them, and checks that no two instances
// share a name, an address or a state file. No error repeats a value that
// could be a secret.
func instancesFromSpecs(fs *flag.FlagSet, specs []string) ([]emulatorInstance, error) {
	// The single-instance flags an --instance spec replaces are its keys'
	// namesakes, and --token; the first in name order is refused.
	var mixed error
	fs.Visit(func(fl *flag.Flag) {
		keys := fl.Name + "=…"
		if fl.Name == "token" {
			keys = "token-file=… or token-env=…"
		}
		if mixed == nil && (fl.Name == "token" || slices.Contains(instanceKeys, fl.Name)) {
			mixed = fmt.Errorf("--%s: not with --instance; put %s in each --instance", fl.Name, keys)
		}
	})
	if mixed != nil {
		return nil, mixed
	}
	insts := make([]emulatorInstance, 0, len(specs))
	for i, spec := range specs {
		in, err := parseInstance(i+1, spec)
		if err != nil {
			return nil, err
		}
		for _, prev := range insts {
			switch {
			case in.name == prev.name:
				return nil, fmt.Errorf("--instance %s: name given twice; give each instance its own", in.name)
			case in.listen == prev.listen && !strings.HasSuffix(in.listen, ":0"):
				return nil, fmt.Errorf("--instance %s: listen %q is %s's too; give each instance its own port", in.name, in.listen, prev.name)
			case in.state != "" && sameFile(in.state, prev.state):
				return nil, fmt.Errorf("--instance %s: state %q is %s's too; give each instance its own file", in.name, in.state, prev.name)
			}
		}
		insts = append(insts, in)
	}
	return insts, nil
}

// parseInstance reads the n-th --instance spec (key=value,key=value) and
// resolves its token. encoding/csv (for quoted values) was weighed: quotes
// inside a shell-quoted flag confuse more than a path without commas does.
func parseInstance(n int, spec string) (emulatorInstance, error) {
	kv := make(map[string]string)
	label := fmt.Sprintf("--instance #%d", n)
	for i, part := range strings.Split(spec, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		_, dup := kv[k]
		switch {
		case !ok:
			return emulatorInstance{}, fmt.Errorf("%s: part %d has no '='; write key=value, e.g. listen=127.0.0.1:8099", label, i+1)
		case k == "token":
			return emulatorInstance{}, fmt.Errorf("%s: token: a literal token is visible in the process list; use token-file=FILE or token-env=VAR", label)
		case !slices.Contains(instanceKeys, k):
			return emulatorInstance{}, fmt.Errorf("%s: unknown key %q; the keys are %s", label, k, strings.Join(instanceKeys, ", "))
		case dup:
			return emulatorInstance{}, fmt.Errorf("%s: %s given twice", label, k)
		}
		kv[k] = v
	}
	in := emulatorInstance{name: kv["name"], listen: kv["listen"], mode: cmp.Or(kv["mode"], emulator.ModeSpec),
		state: kv["state"], clientID: emulator.DefaultClientID, tokenTTL: emulator.DefaultTokenTTL}
	if !instanceName.MatchString(in.name) {
		return in, fmt.Errorf("%s: name: missing or not letters, digits, - and _ (at most 64); add name=NAME", label)
	}
	_, _, listenErr := net.SplitHostPort(in.listen)
	var err error
	switch {
	case in.listen == "":
		err = errors.New("listen: missing; add listen=HOST:PORT")
	case listenErr != nil:
		err = fmt.Errorf("listen %q: want HOST:PORT, e.g. 127.0.0.1:8099", in.listen)
	case in.mode != emulator.ModeSpec && in.mode != emulator.ModeDocumented:
		err = fmt.Errorf("mode %q: must be %s or %s", in.mode, emulator.ModeSpec, emulator.ModeDocumented)
	default:
		err = parseValues(&in, kv)
	}
	if err != nil {
		return in, fmt.Errorf("--instance %s: %w", in.name, err)
	}
	return in, nil
}

// parseValues reads the keys whose values need parsing and resolves the
// token.
func parseValues(in *emulatorInstance, kv map[string]string) (err error) {
	for _, k := range []string{"client-id", "token-ttl"} {
		if _, ok := kv[k]; ok && in.mode != emulator.ModeDocumented {
			return fmt.Errorf("%s: only with mode=documented (OAuth2); add mode=documented or drop %s", k, k)
		}
	}
	if v, ok := kv["client-id"]; ok {
		if v == "" {
			return errors.New("client-id: empty; drop it for the default " + emulator.DefaultClientID)
		}
		in.clientID = v
	}
	if v, ok := kv["token-ttl"]; ok {
		ttl, err := time.ParseDuration(v)
		if err != nil || ttl <= 0 {
			return fmt.Errorf("token-ttl %q: must be a positive duration, e.g. 5m", v)
		}
		in.tokenTTL = ttl
	}
	if v, ok := kv["seed-requests"]; ok {
		in.seedRequests, err = strconv.Atoi(v)
		if err != nil || in.seedRequests < 0 || in.seedRequests > emulator.MaxRandomRequests {
			return fmt.Errorf("seed-requests: must be 0 to %d", emulator.MaxRandomRequests)
		}
	}
	in.token, err = instanceToken(kv["token-file"], kv["token-env"])
	return err
}

// instanceToken resolves an instance's token: token-file, else token-env,
// else $QUOTESYNC_EMULATOR_TOKEN. No error contains the token.
func instanceToken(file, env string) (string, error) {
	switch {
	case file != "" && env != "":
		return "", errors.New("token-file and token-env: give one of them")
	case file != "":
		return readEmulatorToken(file)
	case env != "":
		if tok := strings.TrimSpace(os.Getenv(env)); tok != "" {
			return tok, nil
		}
		return "", fmt.Errorf("token-env: $%s is empty or unset; export it or use token-file=FILE", env)
	}
	if tok := strings.TrimSpace(os.Getenv(emulatorTokenEnv)); tok != "" {
		return tok, nil
	}
	return "", fmt.Errorf("no token: add token-file=FILE or token-env=VAR, or set $%s", emulatorTokenEnv)
}

func sameFile(a, b string) bool {
	if b == "" {
		return false
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}
