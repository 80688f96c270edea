package sync

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/jmoiron/sqlx"
	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// cutSecret is a secret placed across the places where texts are cut.
const cutSecret = "straddle/s3cret+0123456789abcdef"

// straddling is a text whose byte at offset cut falls in the middle of
// cutSecret, with more text after it.
func straddling(cut int) string {
	return strings.Repeat("x", cut-len(cutSecret)/2) + cutSecret + strings.Repeat("y", 3000)
}

// assertNoPart fails when text holds any 6 bytes in a row of cutSecret.
func assertNoPart(tb testing.TB, where, text string) {
	tb.Helper()
	for i := 0; i+6 <= len(cutSecret); i++ {
		if strings.Contains(text, cutSecret[i:i+6]) {
			tb.Errorf("%s keeps part of the secret (%q): %.200q…", where, cutSecret[i:i+6], text[max(0, strings.Index(text, cutSecret[i:i+6])-100):])
			return
		}
	}
}

// loggedText is every message and string field of the entries logged.
func loggedText(logs *observer.ObservedLogs) string {
	var b strings.Builder
	for _, e := range logs.All() {
		b.WriteString(e.Message)
		for _, f := range e.Context {
			b.WriteString(" " + f.String)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestSecretStraddlingACut: a secret that straddles each place a text
// used to be cut before it was redacted is redacted whole: the log
// observer's bounds of an event's error (2000 bytes) and detail (1000),
// the pass's error (2000), the outbox's log of a failed delivery (2000),
// a webhook's answer (300, read up to a bound) and a command's output
// (300). (The OAuth2 token endpoint's excerpt: remote's
// TestTokenEndpointEchoRedacted.)
func TestSecretStraddlingACut(t *testing.T) {
	set := redact.New(cutSecret)

	t.Run("LogObserver", func(t *testing.T) {
		core, logs := observer.New(zap.DebugLevel)
		o := NewLogObserver(zap.New(core), set)
		o.Observe(Event{Kind: EventRetrying, Request: "1", Detail: straddling(1000), Err: errors.New(straddling(2000))})
		o.Observe(Event{Kind: EventPassDone, Err: errors.New(straddling(2000)), Streak: 1, Summary: &Summary{}})
		if logs.Len() != 2 {
			t.Fatalf("%d lines logged, want 2", logs.Len())
		}
		out := loggedText(logs)
		assertNoPart(t, "the log", out)
		if !strings.Contains(out, redact.Mark) || !strings.Contains(out, "bytes)") {
			t.Errorf("the log has no redacted, bounded text:\n%.300s", out)
		}
	})

	t.Run("OutboxLog", func(t *testing.T) {
		core, logs := observer.New(zap.DebugLevel)
		cs := &cutStore{err: errors.New(straddling(2000))}
		o, err := NewOutbox(cs, cs, NotifyConfig{Secrets: set}, remote.Backoff{Initial: time.Second, Max: time.Minute}, zap.New(core))
		if err != nil {
			t.Fatal(err)
		}
		o.deliver(context.Background(), store.Delivery{ID: 1, Target: store.TargetWriteBack, Kind: shopdb.WriteBackAccepted, RequestID: "1"})
		assertNoPart(t, "the outbox's log", loggedText(logs))
		if !strings.Contains(cs.cause, cutSecret) {
			t.Errorf("the failure was cut before the store could redact it whole: %.100q", cs.cause)
		}
	})

	t.Run("WebhookAnswer", func(t *testing.T) {
		for name, body := range map[string]string{
			"AtTheExcerpt": straddling(maxAnswer),
			// Whole secrets shrink to the mark as they are redacted,
			// pulling the one the read's bound cuts into the excerpt.
			"AtTheReadBound": strings.Repeat(cutSecret, int(set.ReadBound(maxAnswer))/len(cutSecret)+2),
		} {
			t.Run(name, func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					w.WriteHeader(http.StatusBadRequest)
					fmt.Fprint(w, body)
				}))
				t.Cleanup(srv.Close)
				w := newWebhook(WebhookConfig{URL: srv.URL + "/hooks/key", Timeout: 5 * time.Second}, set)
				err := w.send(context.Background(), Notice{ID: "n1"}, []byte("{}"))
				if err == nil {
					t.Fatal("a 400 was taken as delivered")
				}
				assertNoPart(t, "the webhook's error", err.Error())
				if !strings.Contains(err.Error(), redact.Mark) || strings.Contains(err.Error(), "/hooks/key") {
					t.Errorf("error %q: want the secret redacted and the URL's path not shown", err)
				}
			})
		}
	})

	t.Run("CommandOutput", func(t *testing.T) {
		c := &command{cfg: CommandConfig{Path: "/bin/sh", Args: []string{"-c", "printf '%s' \"$0\"; exit 3", straddling(maxAnswer)},
			Timeout: 10 * time.Second, Grace: time.Second}, secrets: set}
		err := c.send(context.Background(), Notice{ID: "n1"}, []byte("{}"))
		if err == nil {
			t.Fatal("a failed command was taken as delivered")
		}
		assertNoPart(t, "the command's error", err.Error())
		if !strings.Contains(err.Error(), redact.Mark) {
			t.Errorf("error %q: want the secret redacted", err)
		}
	})
}

// cutStore is an OutboxStore and the WriteBacks whose write-back fails
// with err; it keeps the failure it is told.
type cutStore struct {
	OutboxStore // the methods the test does not reach
	err         error
	cause       string
}

func (s *cutStore) HasWriteBack(string) bool { return true }

func (s *cutStore) Config() shopdb.Config { return shopdb.Config{QueryTimeout: time.Minute} }

func (s *cutStore) Deliver(ctx context.Context, _ int64, do func(context.Context, *sqlx.Tx) error) error {
	return do(ctx, nil)
}

func (s *cutStore) WriteBack(context.Context, *sqlx.Tx, string, shopdb.WriteBackParams) error {
	return s.err
}

func (s *cutStore) DeliveryFailed(_ context.Context, _ int64, cause string, _ time.Time) error {
	s.cause = cause
	return nil
}
