package config

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	qsync "github.com/quotesync/quotesync/sync"
)

// Origin says where a value of the effective configuration comes from.
type Origin string

// Origins of Entry.
const (
	OriginFile        Origin = "file"        // the YAML file
	OriginDefault     Origin = "default"     // not in the file (or its zero value): the default applies
	OriginEnvironment Origin = "environment" // an environment variable (a secret, or ${VAR} in a value)
	OriginSecretFile  Origin = "secret file" // a secret read from the file a *_file key names
)

// Entry is one key of the effective configuration.
type Entry struct {
	Key    string `json:"key"`
	Value  string `json:"value"` // never a secret
	Origin Origin `json:"origin"`
	Detail string `json:"detail,omitempty"`
}

// hiddenValue stands for a secret's value.
const hiddenValue = "(secret, not shown)"

// keyDefaults are the defaults of the keys whose zero value means "the
// default", as the packages apply them; a key without an entry shows its
// zero value. f is the file (a default may derive from other keys).
var keyDefaults = map[string]func(f *File) any{
	"remote.timeout":                      fixed(remote.DefaultTimeout),
	"remote.max_attempts":                 fixed(remote.DefaultMaxAttempts),
	"remote.backoff_initial":              fixed(remote.DefaultBackoffInitial),
	"remote.backoff_max":                  fixed(remote.DefaultBackoffMax),
	"remote.rate_limit":                   fixed(remote.DefaultRateLimit),
	"remote.burst":                        fixed(remote.DefaultBurst),
	"remote.max_body_bytes":               fixed(remote.DefaultMaxBodyBytes),
	"remote.draft_update":                 fixed(remote.DefaultDraftUpdate),
	"remote.status_method":                fixed(remote.DefaultStatusMethod),
	"remote.status_path":                  fixed(remote.DefaultStatusPath),
	"remote.booking_date_layout":          fixed(remote.DefaultBookingDateLayout),
	"remote.token.oauth2.expiry_leeway":   fixed(remote.DefaultExpiryLeeway),
	"remotes.work_types":                  fixed("none (shop.work_types)"),
	"remotes.schedule":                    fixed("sync.schedule"),
	"remotes.concurrency":                 fixed("sync.concurrency"),
	"shop.addr":                           fixed(shopdb.DefaultAddr),
	"shop.table_prefix":                   fixed(shopdb.DefaultTablePrefix),
	"shop.lock_name":                      defaultLockName,
	"shop.conn_max_lifetime":              fixed(shopdb.DefaultConnMaxLifetime),
	"shop.conn_max_idle_time":             fixed(shopdb.DefaultConnMaxIdleTime),
	"shop.max_open_conns":                 fixed(shopdb.DefaultMaxOpenConns),
	"shop.query_timeout":                  fixed(shopdb.DefaultQueryTimeout),
	"shop.lock_wait":                      fixed(shopdb.DefaultLockWait),
	"shop.lock_heartbeat":                 fixed(shopdb.DefaultLockHeartbeat),
	"shop.lock_session_timeout":           fixed(shopdb.DefaultLockSessionTimeout),
	"sync.schedule":                       fixed(qsync.DefaultConfig().Schedule),
	"sync.time_zone":                      fixed("Local"),
	"sync.concurrency":                    fixed(qsync.DefaultConfig().Concurrency),
	"sync.max_new_per_pass":               fixed(qsync.DefaultConfig().MaxNewPerPass),
	"sync.pass_timeout":                   fixed(qsync.DefaultConfig().PassTimeout),
	"sync.retry_backoff_min":              fixed(qsync.DefaultConfig().RetryBackoffMin),
	"sync.retry_backoff_max":              fixed(qsync.DefaultConfig().RetryBackoffMax),
	"sync.max_conflicts":                  fixed(qsync.DefaultConfig().MaxConflicts),
	"sync.watch_submitted":                fixed(qsync.DefaultConfig().WatchSubmitted),
	"quote.type":                          fixed(qsync.DefaultConfig().Quote.Type),
	"log.level":                           fixed(defaultLogLevel),
	"log.format":                          fixed(defaultLogFormat),
	"control.socket":                      func(f *File) any { return defaultSocket(f.site) },
	"metrics.listen":                      fixed("off"),
	"metrics.health_max_age":              fixed("three activations of sync.schedule"),
	"remote.token.oauth2.endpoint_params": fixed("none"),
	"shop.limits.max_quantity":            fixed(shopdb.DefaultMaxQuantity),
	"shop.limits.max_price":               fixed(shopdb.DefaultMaxPrice),
	"shop.limits.max_digits":              fixed(shopdb.DefaultMaxDigits),
	"notify.events":                       fixed(qsync.NotifyKinds()),
	"notify.expiry_warning":               fixed(qsync.DefaultExpiryWarning),
	"notify.webhook.timeout":              fixed(qsync.DefaultWebhookTimeout),
	"notify.command.timeout":              fixed(qsync.DefaultCommandTimeout),
	"metrics.status_page":                 fixed(DefaultStatusPage),
	"metrics.auth":                        listenerDefault(func(a ListenerAuth) string { return a.Page }),
	"metrics.scrape_auth":                 listenerDefault(func(a ListenerAuth) string { return a.Scrape }),
	"metrics.session_lifetime":            fixed(DefaultSessionLifetime),
	"metrics.users_file":                  fixed("none"),
	"metrics.tls_cert_file":               fixed("none (plain HTTP)"),
	"metrics.tls_key_file":                fixed("none (plain HTTP)"),
}

// listenerDefault is a key of the listener's login as Listener decides it
// from the rest of the file.
func listenerDefault(pick func(ListenerAuth) string) func(*File) any {
	return func(f *File) any {
		a, err := f.Metrics.Listener()
		if err != nil || pick(a) == "" {
			return "refused: see quotesync check"
		}
		return pick(a)
	}
}

func fixed(v any) func(*File) any { return func(*File) any { return v } }

// defaultLockName is shop.lock_name's default, as shopdb derives it.
func defaultLockName(f *File) any {
	if f.Shop.Database == "" {
		return ""
	}
	name := "quotesync." + f.Shop.Database + "." + cmp.Or(f.Shop.TablePrefix, shopdb.DefaultTablePrefix)
	if len(name) > 64 {
		return "a hash of " + name + " (64 characters at most)"
	}
	return name
}

// Effective lists every key of the file at path as the daemon sees it:
// the value set, or the default; where each comes from; and, for each
// secret, only where it is read from, for site of the template unit
// (File.SetSite; "" for none). getenv (os.Getenv when nil) reads ${VAR}
// in values and the variables *_env keys name. The list follows the file
// structs, so a key added to them is listed without more code.
func Effective(path, site string, getenv func(string) string) ([]Entry, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	f, err := Load(path)
	if err != nil {
		return nil, err
	}
	f.SetSite(site)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil && len(bytes.TrimSpace(data)) > 0 {
		return nil, fmt.Errorf("parse config: %w", err)
	}
	w := &effWalk{file: f, present: map[string]bool{}, getenv: getenv}
	presentKeys(&doc, "", w.present)
	w.walk(reflect.ValueOf(f).Elem(), "")
	// Each insurer of remotes: by its name, as logs and status name it.
	byName := func(text string) string {
		return remotesIndex.ReplaceAllStringFunc(text, func(m string) string {
			n, err := strconv.Atoi(m[len("remotes[") : len(m)-1])
			if err != nil || n >= len(f.Remotes) || f.Remotes[n].Name == "" {
				return m
			}
			return "remotes[" + f.Remotes[n].Name + "]"
		})
	}
	for i := range w.out {
		w.out[i].Key, w.out[i].Detail = byName(w.out[i].Key), byName(w.out[i].Detail)
	}
	return w.out, nil
}

// remotesIndex matches the start of a key of one of remotes:.
var remotesIndex = regexp.MustCompile(`remotes\[\d+\]`)

// defaultKey is the key of keyDefaults that holds path's default: an
// insurer of remotes: has its own ("remotes.schedule"), else remote:'s.
func defaultKey(path string) string {
	m := remotesIndex.FindString(path)
	if m == "" || !strings.HasPrefix(path, m) {
		return path
	}
	if own := "remotes" + path[len(m):]; keyDefaults[own] != nil {
		return own
	}
	return "remote" + path[len(m):]
}

// presentKeys collects the key paths the YAML sets: "a.b", list items
// "a.b[0]", map entries "a.b.KEY".
func presentKeys(n *yaml.Node, prefix string, into map[string]bool) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			presentKeys(c, prefix, into)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := strings.TrimPrefix(prefix+"."+n.Content[i].Value, ".")
			into[p] = true
			presentKeys(n.Content[i+1], p, into)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", prefix, i)
			into[p] = true
			presentKeys(c, p, into)
		}
	}
}

type effWalk struct {
	file    *File
	present map[string]bool
	getenv  func(string) string
	out     []Entry
}

var stringerType = reflect.TypeFor[fmt.Stringer]()

// walk lists v's keys under path: sections (structs) by their yaml tags,
// maps by sorted key, lists by index; anything else is a value.
func (w *effWalk) walk(v reflect.Value, path string) {
	switch {
	case v.Kind() == reflect.Pointer:
		if !v.IsNil() { // an unset alternative (remote.token.oauth2) has no keys
			w.walk(v.Elem(), path)
		}
	case v.Kind() == reflect.Struct && !v.Type().Implements(stringerType):
		t := v.Type()
		for i := range t.NumField() {
			name, opts, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			switch {
			case !t.Field(i).IsExported() || name == "-":
				continue
			case name == "" && opts == "inline":
				w.walk(v.Field(i), path) // RemoteEntry's remote: keys
				continue
			case name == "":
				continue
			case path == "" && name == "remote" && len(w.file.Remotes) > 0,
				path == "" && name == "remotes" && len(w.file.Remotes) == 0:
				continue // the form the file does not use
			}
			w.walk(v.Field(i), strings.TrimPrefix(path+"."+name, "."))
		}
	case v.Kind() == reflect.Map && v.Len() > 0:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			w.walk(v.MapIndex(k), fmt.Sprintf("%s.%v", path, k))
		}
	case v.Kind() == reflect.Slice && v.Len() > 0:
		for i := range v.Len() {
			w.walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		w.leaf(v, path)
	}
}

// leaf lists one value.
func (w *effWalk) leaf(v reflect.Value, path string) {
	name := path[strings.LastIndex(path, ".")+1:]
	switch {
	case isSecretName(name):
		if !v.IsZero() { // refused by the validation; never shown
			w.add(Entry{Key: path, Value: hiddenValue, Origin: OriginFile,
				Detail: "refused: secrets never go in the YAML; use a *_file or *_env key"})
		}
		return
	case v.IsZero() && isSecretSource(name) && keyDefaults[defaultKey(path)] == nil:
		return // an alternative not taken; the secret's own entry says where it comes from
	case v.IsZero():
		e := Entry{Key: path, Value: shown(v), Origin: OriginDefault}
		def, hasDefault := keyDefaults[defaultKey(path)]
		switch {
		case hasDefault:
			e.Value = fmt.Sprint(def(w.file))
			if w.present[path] {
				e.Detail = "the file's zero value means the default"
			}
		case v.Kind() == reflect.Map || v.Kind() == reflect.Slice:
			e.Value = "none"
		case w.present[path]:
			e.Origin = OriginFile
		}
		w.add(e)
		return
	}
	e := Entry{Key: path, Value: shown(v), Origin: OriginFile}
	if s, ok := v.Interface().(string); ok && strings.Contains(s, "$") {
		e.Detail = w.expansion(s)
	}
	if path == "notify.webhook.url" {
		// Its path and query are a secret (a webhook's key): where it
		// goes only.
		e.Value = qsync.WebhookOrigin(v.String())
		e.Detail = "its path and query are a secret, not shown; notify.webhook.url_file or url_env keep them out of the YAML"
	}
	w.add(e)
	w.secretSource(path, name, v)
}

// secretSource adds the secret a *_file or *_env key (or a section's
// file/env) names: where it is read from.
func (w *effWalk) secretSource(path, name string, v reflect.Value) {
	s, ok := v.Interface().(string)
	if !ok || s == "" || path == "metrics.tls_cert_file" || !isSecretSource(name) { // a certificate is public
		return
	}
	secret := path[:max(strings.LastIndex(path, "."), 0)]
	if name != "file" && name != "env" {
		secret = strings.TrimPrefix(secret+"."+name[:strings.LastIndex(name, "_")], ".")
	}
	if strings.HasSuffix(name, "env") {
		state := "set"
		if w.getenv(s) == "" {
			state = "not set in this environment"
		}
		w.add(Entry{Key: secret, Value: hiddenValue, Origin: OriginEnvironment,
			Detail: fmt.Sprintf("variable %s (%s), named by %s", s, state, path)})
		return
	}
	where := s
	if strings.Contains(s, "$") {
		where += "; " + w.expansion(s)
	}
	w.add(Entry{Key: secret, Value: hiddenValue, Origin: OriginSecretFile,
		Detail: fmt.Sprintf("%s, named by %s", where, path)})
}

// expansion says what ${VAR} in s becomes in this environment.
func (w *effWalk) expansion(s string) string {
	out, unset := expand(s, w.getenv)
	if len(unset) > 0 {
		return fmt.Sprintf("${%s} unset here (systemd sets CREDENTIALS_DIRECTORY for the service)", strings.Join(unset, "}, ${"))
	}
	return "here: " + out
}

func (w *effWalk) add(e Entry) { w.out = append(w.out, e) }

func isSecretSource(name string) bool {
	return name == "file" || name == "env" || strings.HasSuffix(name, "_file") || strings.HasSuffix(name, "_env")
}

// isSecretName reports whether a key holds a secret itself (the refused
// keys, and any such key added later).
func isSecretName(name string) bool {
	switch name {
	case "value", "password", "secret", "client_secret", "token":
		return true
	}
	return strings.HasSuffix(name, "_password") || strings.HasSuffix(name, "_secret") || strings.HasSuffix(name, "_token")
}

func shown(v reflect.Value) string {
	if s, ok := v.Interface().(fmt.Stringer); ok {
		return s.String()
	}
	if v.Kind() == reflect.String && v.String() == "" {
		return `""`
	}
	return fmt.Sprint(v.Interface())
}
