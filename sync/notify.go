package sync

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// Defaults of NotifyConfig.
const (
	DefaultExpiryWarning  = 2 * time.Hour
	DefaultWebhookTimeout = 10 * time.Second
	DefaultCommandTimeout = 30 * time.Second
	DefaultCommandGrace   = 5 * time.Second
)

// NotifyConfig configures the notifiers: who is told of the events that
// need a person. Without a webhook and a command nobody is.
type NotifyConfig struct {
	// Events lists the notices that are sent (NotifyKinds). Default all.
	Events []string
	// ExpiryWarning: a request that is not accepted yet (waiting for a
	// job, or its accept not settled) this close to its expiry is
	// noticed, once. Default 2h; negative: never.
	ExpiryWarning time.Duration
	Webhook       WebhookConfig
	Command       CommandConfig
	// Secrets are redacted from what a receiver or a command answers, the
	// whole answer before it is cut, and from the outbox's log (Open
	// gives the daemon's set). nil: none is.
	Secrets *redact.Secrets
}

// WebhookConfig is a notifier that POSTs each notice as JSON.
type WebhookConfig struct {
	// URL receives the POST; "" means no webhook.
	URL string
	// Timeout bounds one attempt. Default 10s.
	Timeout time.Duration
	// Header, when set, is sent with Secret as its value (for example
	// "Authorization" with "Bearer …"). Secret is never logged.
	Header string
	Secret string
}

// CommandConfig is a notifier that runs a command with each notice as JSON
// on its standard input.
type CommandConfig struct {
	// Path is the program; "" means no command. Args are its arguments.
	Path string
	Args []string
	// Timeout bounds one run. The command runs in a process group of its
	// own, which gets SIGTERM at the timeout and SIGKILL Grace later: a
	// script's children (curl, sleep) end with it. Default 30s.
	Timeout time.Duration
	// Grace is how long the group has between SIGTERM and SIGKILL.
	// Default DefaultCommandGrace.
	Grace time.Duration
}

// withDefaults fills zero fields with their defaults.
func (c NotifyConfig) withDefaults() NotifyConfig {
	if c.Events == nil {
		c.Events = NotifyKinds()
	}
	c.ExpiryWarning = cmp.Or(c.ExpiryWarning, DefaultExpiryWarning)
	c.Webhook.Timeout = cmp.Or(c.Webhook.Timeout, DefaultWebhookTimeout)
	c.Command.Timeout = cmp.Or(c.Command.Timeout, DefaultCommandTimeout)
	c.Command.Grace = cmp.Or(c.Command.Grace, DefaultCommandGrace)
	return c
}

// Validate names the key of the first bad setting and the fix.
func (c NotifyConfig) Validate() error {
	kinds := NotifyKinds()
	for _, k := range c.Events {
		if !slices.Contains(kinds, k) {
			return fmt.Errorf("notify.events: %q is not a notice; use any of %s", k, strings.Join(kinds, ", "))
		}
	}
	if c.Webhook.URL != "" {
		u, err := url.Parse(c.Webhook.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("notify.webhook.url: %s is not an http(s) URL; write e.g. https://hooks.example.com/quotesync", WebhookOrigin(c.Webhook.URL))
		}
	}
	if c.Webhook.Timeout < 0 || c.Command.Timeout < 0 {
		return errors.New("notify.webhook.timeout and notify.command.timeout: must not be negative")
	}
	return nil
}

// Notice is the JSON a notifier sends: one event that needs a person.
type Notice struct {
	// ID is the same for every delivery of one event (the webhook, the
	// command, a delivery sent again after a crash or a restart), and
	// unique across shops and databases (a UUIDv7): a receiver can
	// recognise a notice it has seen. The webhook sends it as the
	// Idempotency-Key header too.
	ID    string `json:"id"`
	Event string `json:"event"` // the notice kind: rejected, taken_elsewhere, …
	// Insurer is the insurer of the request, or whose token is refused
	// (auth_failing); "" only for a notice queued before insurers had
	// names.
	Insurer string      `json:"insurer,omitempty"`
	Request string      `json:"request,omitempty"`
	Claim   string      `json:"claim,omitempty"`
	Job     string      `json:"job,omitempty"`
	Phase   store.Phase `json:"phase,omitempty"`
	Reason  string      `json:"reason,omitempty"` // the reason code
	Words   string      `json:"words"`            // what happened, in words
	Fix     string      `json:"fix,omitempty"`    // what to do about it
	Detail  string      `json:"detail,omitempty"`
	Time    time.Time   `json:"time"`
}

// noticeWords say what each notice means and what to do, when its reason
// does not.
var noticeWords = map[string][2]string{
	shopdb.WriteBackRejected:         {"the remote refused the request for good", "fix what the detail says, then `quotesync retry REQUEST`"},
	shopdb.WriteBackTakenElsewhere:   {"someone else accepted the request", "settle it with the insurer"},
	shopdb.WriteBackSupplementNeeded: {"the job's lines changed after the quote was submitted: a supplement is needed (not pushed)", "arrange the supplement with the insurer"},
	NoticeExpiring:                   {"the request is close to its expiry and not accepted yet", "open a job for the claim in the shop (or fix what holds the accept) before it expires"},
	NoticeAuthFailing:                {"the remote refuses quotesync's token: every pass stops", "put the insurer's current token where remote.token says; nothing else is needed"},
}

// noticeOf is the notice of delivery d.
func noticeOf(d store.Delivery) Notice {
	// The id drawn with its event, or for a row queued before quotesync
	// drew them, the id it was sent with then.
	n := Notice{ID: cmp.Or(d.NoticeID, fmt.Sprintf("quotesync-event-%d", d.EventID)), Event: d.Kind,
		Insurer: d.Insurer, Request: d.RequestID, Claim: d.Claim, Job: d.Job, Phase: d.Phase,
		Reason: string(d.Reason), Detail: d.Detail, Time: d.At}
	w := noticeWords[d.Kind]
	n.Words, n.Fix = w[0], w[1]
	if ri := Reason(d.Reason); ri.Fix != "" {
		n.Words, n.Fix = ri.Words, ri.Fix
	}
	n.Words = cmp.Or(n.Words, d.Kind)
	return n
}

// notifier sends one notice.
type notifier interface {
	send(ctx context.Context, n Notice, body []byte) error
}

// webhook POSTs notices.
type webhook struct {
	cfg     WebhookConfig
	client  *http.Client
	secrets *redact.Secrets // redacted from the receiver's answer
}

func newWebhook(c WebhookConfig, secrets *redact.Secrets) *webhook {
	return &webhook{cfg: c, secrets: secrets, client: &http.Client{
		Timeout: c.Timeout,
		// A redirect is an answer we do not follow: the secret header
		// would go wherever it points.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// maxAnswer is how much of a receiver's or a command's answer an error
// keeps.
const maxAnswer = 300

func (w *webhook) send(ctx context.Context, n Notice, body []byte) error {
	target := WebhookOrigin(w.cfg.URL)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("POST %s: %w", target, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "quotesync")
	req.Header.Set("Idempotency-Key", n.ID)
	if w.cfg.Header != "" {
		req.Header.Set(w.cfg.Header, w.cfg.Secret)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL, query included
		}
		return fmt.Errorf("POST %s: %w", target, err)
	}
	defer resp.Body.Close()
	// Read past what is kept by more than the longest secret: one that
	// straddles the read's bound is then past the excerpt, and the
	// answer is redacted whole before it is cut.
	bound := w.secrets.ReadBound(maxAnswer)
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, bound))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		shown := w.secrets.Excerpt(strings.TrimSpace(string(answer)), maxAnswer, int64(len(answer)) >= bound)
		return fmt.Errorf("POST %s: answered %s: %s", target, w.secrets.Redact(resp.Status), shown)
	}
	return nil
}

// WebhookOrigin shows a webhook's URL without what may hold its key (the
// path of Slack's, Teams' and Discord's, the query, user info):
// "https://hooks.example.com/…".
func WebhookOrigin(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "(an unparsable URL)"
	}
	origin := u.Scheme + "://" + u.Host
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		origin += "/…"
	}
	return origin
}

// commandEnv is a notifier command's environment: not the daemon's, which
// may hold secrets (a token variable, CREDENTIALS_DIRECTORY), but PATH,
// HOME, LANG and TZ as they are, and the notice's kind and request.
func commandEnv(n Notice) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "LANG", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, "QUOTESYNC_NOTICE="+n.Event, "QUOTESYNC_INSURER="+n.Insurer, "QUOTESYNC_REQUEST="+n.Request)
}

// command runs a program with the notice on its standard input.
type command struct {
	cfg     CommandConfig
	secrets *redact.Secrets // redacted from its output
}

// send runs the command in a process group of its own and ends the whole
// group when the run is over: at the timeout (or when ctx ends) SIGTERM,
// and SIGKILL Grace later to whatever is left; after an exit, whatever
// the command left running gets the same. A script's child that
// outlived it could deliver the notice after the retry delivered it too.
// A command that exits on its own is judged by its exit status alone,
// also when what it left holds its output past Grace (exec.ErrWaitDelay).
func (c *command) send(ctx context.Context, n Notice, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.cfg.Path, c.cfg.Args...)
	cmd.Env = commandEnv(n)
	cmd.Stdin = bytes.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var termed time.Time
	cmd.Cancel = func() error {
		termed = time.Now()
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	// The group leader that ignores SIGTERM is killed after Grace; so are
	// the pipes of a child that keeps them open closed.
	cmd.WaitDelay = c.cfg.Grace
	err := cmd.Run()
	if cmd.Process != nil {
		endGroup(cmd.Process.Pid, termed, c.cfg.Grace)
	}
	switch {
	case termed.IsZero() && errors.Is(err, exec.ErrWaitDelay):
		// It exited 0 on its own; what it left holding its output Grace
		// later is ended. Its exit status is its verdict: delivered.
		return nil
	case !termed.IsZero() && ctx.Err() == context.DeadlineExceeded:
		// Only a command that was ended is "killed": the time endGroup
		// took after an exit (a group that lingers) is not the command's.
		return fmt.Errorf("run %s: killed after notify.command.timeout (%s)", c.cfg.Path, c.cfg.Timeout)
	}
	if err != nil {
		return fmt.Errorf("run %s: %w: %s", c.cfg.Path, err, boundText(c.secrets, strings.TrimSpace(out.String()), maxAnswer))
	}
	return nil
}

// groupPoll is how often endGroup looks whether a group has ended.
const groupPoll = 20 * time.Millisecond

// endGroup ends what is left of the process group pgid: SIGTERM unless
// it was sent at termed already, and SIGKILL grace after the SIGTERM to
// whatever is still there. It returns at once when the group is empty.
func endGroup(pgid int, termed time.Time, grace time.Duration) {
	alive := func() bool { return syscall.Kill(-pgid, 0) == nil }
	if !alive() {
		return
	}
	if termed.IsZero() {
		termed = time.Now()
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
	}
	for deadline := termed.Add(grace); time.Now().Before(deadline); time.Sleep(groupPoll) {
		if !alive() {
			return
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}
